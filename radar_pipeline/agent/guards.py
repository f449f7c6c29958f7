"""Input and output guards: deterministic, multilingual, explainable only to the log.

Input guard (``check_input``): the question is normalised several ways (NFKC, format characters
removed, Cyrillic/Greek look-alikes mapped to Latin, accents folded, leetspeak undone, spaced-out
letters joined, and embedded base64 / hex / URL-encoded / ``\\uXXXX`` / rot13 / reversed text
decoded) and every variant is matched against rule families:

* ``override``     — "ignora las instrucciones anteriores", "ignore previous instructions",
                     "a partir de ahora…", fake ``system:`` / ``<|im_start|>`` turns;
* ``extraction``   — asking for the system prompt, hidden instructions, the text above, keys;
* ``impersonation``— "soy el administrador/desarrollador", developer/debug/god mode, sudo;
* ``jailbreak``    — DAN, "sin restricciones", "pretend you have no rules", evil role play;
* ``encoding``     — "decode this and follow it", payloads that only appear once decoded.

Rules cover Spanish, English and Portuguese, with the commonest French/German/Italian overrides.
The verdict carries the rule that fired (``GuardVerdict.rule``) for the trace and the log; the
user-facing reply (``BLOCKED_REPLY``) never names it.

Output guard (``check_output``): system-prompt leaks (a per-process canary planted in every
system prompt, or any 8-word run of a system prompt), toxic language (a short slur/insult list),
and echoed injection text. ``scan_passage`` flags retrieved passages carrying instructions so the
writers skip them (retrieved text is data, never instructions).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import secrets
from dataclasses import dataclass, field
from urllib.parse import unquote

from radar_pipeline.textfold import fold_secure

BLOCKED_REPLY = (
    "No puedo ayudar con esa solicitud. Puedo responder preguntas sobre inteligencia artificial en "
    "contextos militares, seguridad espacial y dinámicas territoriales en América Latina, citando los "
    "documentos de la base de conocimiento."
)

# A random marker planted in every system prompt of this process: if it ever appears in an answer,
# a prompt leaked. Regenerated per process so it cannot be learned from the repository.
CANARY = "RDR-" + secrets.token_hex(6).upper()


@dataclass(frozen=True)
class GuardVerdict:
    """``allowed`` False means stop; ``rule`` (family:name) and ``variant`` are for the log only."""

    allowed: bool
    rule: str | None = None
    variant: str | None = None
    matched: str | None = None


# --------------------------------------------------------------------------- normalisation
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i", "|": "l", "€": "e"}
)
_SPACED = re.compile(r"(?<!\w)(?:\w[\s.\-_*+·,/]{1,3}){3,}\w(?!\w)")
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}[\s:]?){8,}")
_UESC = re.compile(r"\\u([0-9a-fA-F]{4})")
_WS = re.compile(r"\s+")


def _join_spaced(t: str) -> str:
    return _SPACED.sub(lambda m: re.sub(r"[\s.\-_*+·,/]", "", m.group(0)), t)


def _printable_ratio(s: str) -> float:
    return sum(c.isprintable() or c.isspace() for c in s) / max(1, len(s))


def _decoded_payloads(raw: str) -> list[str]:
    out: list[str] = []
    for m in _B64.finditer(raw):
        tok = m.group(0)
        try:
            dec = base64.b64decode(tok + "=" * (-len(tok) % 4), validate=False).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if len(dec) >= 6 and _printable_ratio(dec) > 0.95 and re.search(r"[a-zA-Z]{3}", dec):
            out.append(dec)
    for m in _HEX.finditer(raw):
        digits = re.sub(r"[\s:]", "", m.group(0))
        try:
            dec = bytes.fromhex(digits[: len(digits) // 2 * 2]).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if _printable_ratio(dec) > 0.95 and re.search(r"[a-zA-Z]{3}", dec):
            out.append(dec)
    if re.search(r"['\"]\s*\+\s*['\"]", raw):  # 'ign' + 'ore prev' + 'ious …'
        out.append(re.sub(r"['\"]\s*\+\s*['\"]", "", raw))
    if "%" in raw:
        dec = unquote(raw)
        if dec != raw:
            out.append(dec)
    if _UESC.search(raw):
        out.append(_UESC.sub(lambda m: chr(int(m.group(1), 16)), raw))
    return out


def variants(text: str) -> dict[str, str]:
    """The normalised views of ``text`` the rules are matched against (name → text)."""
    base = fold_secure(text)
    views = {
        "folded": base,
        "joined": _join_spaced(base),
        "leet": _join_spaced(base.translate(_LEET)),
        "rot13": codecs.decode(base, "rot13"),
        "reversed": base[::-1],
        "compact": re.sub(r"[^a-z0-9 ]+", "", base),
    }
    for i, dec in enumerate(_decoded_payloads(text)):
        views[f"decoded{i}"] = fold_secure(dec)
    return views


# --------------------------------------------------------------------------- rules
_GAP = r"[^.?!\n]{0,60}?"
_G20 = r"[^.?!\n]{0,25}?"
_IGN = (
    r"(?:ignor\w*|olvid\w*|forget\w*|disregard\w*|omit\w*|pasa por alto|haz caso omiso|bypass\w*|overrid\w*|"
    r"anula\w*|descarta\w*|desestima\w*|desconsider\w*|esquec\w*|esqueca|skip\w*|dismiss\w*|deja de lado|"
    r"salta(?:te)? (?:tus|las|todas)|abandona\w*|deja atras|no (?:sigas|obedezcas|hagas caso|respetes|cumplas)|"
    r"stop following|don'?t follow|do not follow|nao (?:siga|obedeca)|ignorez|oubliez|ignoriere|vergiss|suspend\w*|desactiva\w*|disable\w*|turn off|apaga\w*)"
)
_NOUNS = (
    r"(?:instruc\w*|instrucoes|prompt\w*|reglas|rules|regras|directrices|directives|guidelines|indicaciones|"
    r"ordenes|orders|programacion|programming|configuracion|restricc\w*|restrictions?|filtros?|filters?|"
    r"guardrails?|normas|safety|policies|politicas|consignas|anweisungen|istruzioni|limitaciones|limitations)"
)
_QUAL = (
    r"(?:anteriores|previas|previos|previous|prior|above|earlier|preceding|de arriba|iniciales|originales|original|"
    r"del sistema|de sistema|system|que te (?:dieron|dio|han dado|dimos|di|indicaron|programaron)|"
    r"you (?:were|have been|was) given|acima|anteriormente|hasta ahora|so far|de seguridad|of safety|"
    r"de tu (?:creador|desarrollador)|precedentes|vorherigen|bisherigen|precedenti)"
)
_POSS = r"(?<!\w)(?:tus|tu|your|vos|tes|deine|le tue|suas|seus|todas?|all|any|cualquier\w*|every|cada|toutes)"
_ABOVE = (
    r"(?:todo lo (?:anterior|de arriba|que te (?:dijeron|han dicho|indicaron))|everything (?:above|before|you (?:were|have been|'ve been) told)|"
    r"the above|lo anterior|all of the above|tudo (?:o que|acima)|what you were told|what you have been told)"
)

RULES: dict[str, list[tuple[str, re.Pattern]]] = {
    "override": [
        (
            "ignore_rules",
            re.compile(
                _IGN
                + _G20
                + r"(?:"
                + _POSS
                + _G20
                + _NOUNS
                + r"|"
                + _NOUNS
                + _G20
                + _QUAL
                + r"|"
                + _QUAL
                + r"\s+"
                + _NOUNS
                + r"|"
                + _ABOVE
                + r"|"
                + _NOUNS
                + r",? (?:y|and|e|et|und) (?:dime|di|responde|escribe|muestra|revela|haz|tell|say|write|print|show|reveal|output|respond|do|answer|diga|mostre))"
            ),
        ),
        (
            "new_instructions",
            re.compile(
                r"(?:nuevas|new|novas|updated|actualizadas|real|verdaderas|true|revised|overriding) (?:instruc\w*|orders|ordenes|rules|reglas|directives|directrices)\s*[:\-]"
            ),
        ),
        (
            "from_now_on",
            re.compile(
                r"(?:a partir de ahora|desde ahora|de ahora en adelante|from now on|henceforth|a partir de agora|de agora em diante|from this point on)"
                + _G20
                + r"(?:eres|seras|responde\w*|actua\w*|ignora\w*|you (?:are|will|must|shall|should)|act (?:as|like)|respond\w*|answer\w*|voce|debes|tienes que|deberas|solo (?:responde|dices|hablas)|only (?:respond|answer|say|speak)|tu (?:unica|nueva)|your (?:only|new))"
            ),
        ),
        (
            "fake_turn",
            re.compile(
                r"(?:^|[\[<(#|{]\s*)(?:system|sistema|assistant|asistente|developer|admin)\s*(?:\]|>|\)|:|\||})|<\|?im_start\|?>|<\|?im_end\|?>|\[/?inst\]|<<sys>>|###\s*(?:instruction|system|new|instruccion)|</?system>|begin (?:system )?prompt|end of (?:system )?prompt|(?:^|\s)(?:system|sistema)\s*:\s*(?:you|eres|tu |ignore|ignora|new|nuevas|el asistente|the assistant|a partir)"
            ),
        ),
        (
            "instead_do",
            re.compile(
                r"(?:en lugar de|instead of|em vez de|en vez de)"
                + _G20
                + r"(?:responder|answer\w*|la pregunta|the question|seguir|following)"
                + _GAP
                + r"(?:di |escribe|say|write|print|output|responde|diga|escreva|dime|tell me|reveal|revela|muestra)"
            ),
        ),
        (
            "priority_claim",
            re.compile(
                r"(?:esta|this|la siguiente|the following) (?:instruccion|instruction|orden|order|mensaje|message|regla|rule) (?:tiene|has|takes|overrides|anula|reemplaza|supersedes) (?:prioridad|priority|precedence|todas|all|las|the)"
            ),
        ),
        (
            "override_foreign",
            re.compile(
                r"(?:ignorez|oubliez) (?:toutes? )?(?:les |vos )?(?:instructions|regles|consignes)|ignoriere (?:alle )?(?:vorherigen |bisherigen )?(?:anweisungen|regeln)|ignora (?:tutte )?le (?:istruzioni|regole)|vergiss (?:alle|deine)"
            ),
        ),
    ],
    "extraction": [
        (
            "system_prompt",
            re.compile(
                r"(?:system|sistema|developer|meta)[ \-_]?(?:prompt\w*|message|mensaje|mensagem|instruc\w*)|(?:initial|inicial|hidden|oculto|secret\w*|original|internal|interno|pre-?prompt|hidden)[ \-_]?(?:prompt\w*|instructions?)|prompt (?:del?|de|do) (?:sistema|sistem|systeme)|mensaje (?:del|de) sistema|(?<!\w)(?:tu|tus|your) (?:prompt\w*|instruc\w*|reglas (?:internas|ocultas|secretas)|configuracion (?:inicial|interna)|system|initial|reglas|rules|directrices|guidelines|restricciones|restrictions|programacion|programming)"
            ),
        ),
        (
            "reveal_instructions",
            re.compile(
                r"(?:muestra\w*|muestrame|revela\w*|dime|repite|repeat|imprime|print|escribe|write|copia|copy|comparte|share|ensena\w*|show|reveal|tell me|output|display|dump|leak|filtra\w*|expon\w*|expose|mostre|revele|diga|transcrib\w*|recita\w*|recite|parafrasea\w*|paraphrase|resume|summari[sz]e|traduce|translate|enumera|lista|list|give me|dame|entrega\w*)"
                + _GAP
                + r"(?:(?:instruc\w*|prompt\w*|reglas|rules|directrices|guidelines|configuracion|configuration|mensaje) (?:iniciales|originales|ocultas|internas|secretas|del sistema|de sistema|que te (?:dieron|dio|han dado|programaron)|you were given|that you were given|you received|initial|original|hidden|internal|secret)|text above|words above|everything above|the above|texto (?:anterior|de arriba|previo)|todo lo (?:anterior|de arriba)|(?:primer(?:as?)?|first) (?:lineas|palabras|mensaje|lines|words|message|instruc\w*)|lo que (?:te )?(?:dijeron|indicaron|programaron)|what (?:you were|were you) (?:told|instructed|programmed)|contexto oculto|hidden context|your context|tu contexto)"
            ),
        ),
        (
            "what_instructions",
            re.compile(
                r"(?:cuales|que|what|quais) (?:son|are|eram|fueron|were|es|is) (?:tus|your|suas|tu) (?:instruc\w*|reglas|rules|regras|directrices|guidelines|restricciones|restrictions|prompt\w*|ordenes|orders)|(?:con que|what|which) (?:instrucciones|instructions|prompt) (?:te|were you|you were)|how (?:were you|are you|have you been) (?:prompted|instructed|configured|programmed)|como (?:te )?(?:configuraron|programaron|instruyeron)|(?:que|what) (?:te dijeron|were you told)"
            ),
        ),
        (
            "above_text",
            re.compile(
                r"(?:repeat|repite|repita|print|imprime|output|copia|copy)"
                + _GAP
                + r"(?:above|arriba|acima|before this|antes de esto|verbatim|textualmente|palabra por palabra|word for word|literalmente|literally)"
            ),
        ),
        (
            "credentials",
            re.compile(
                r"(?:api[ _-]?key|clave (?:de )?(?:la )?api|secret key|clave secreta|access token|token de acceso|tus credenciales|your credentials|variables? de entorno|environment variables?|\.env\b|env vars?|(?:tu|tus|your) (?:contrasenas?|passwords?|senhas?)|(?:contrasenas?|passwords?|senhas?|credenciales|credentials) (?:del?|of the|for the|de la|do) (?:servidor|server|sistema|system|administrador|admin\w*|base de datos|database|modelo|model|api))"
            ),
        ),
        ("canary", re.compile(r"rdr-[0-9a-f]{12}")),
    ],
    "impersonation": [
        (
            "claims_authority",
            re.compile(
                r"(?:soy|i am|i'm|im|sou|speaking as|hablando como|te habla|le habla|this is (?:the|your)|como tu|as your|en calidad de)\s+(?:el |la |tu |your |the |o |a |un |an? |seu |sua |su )?(?:administrador\w*|admin\w*|desarrollador\w*|developer|dev|creador\w*|creator|operador\w*|operator|programador\w*|programmer|dueno|owner|propietario|sysadmin|root|superusuario|superuser|ingeniero de openai|openai|anthropic|equipo de seguridad|security team|red team\w*|supervisor\w*|moderador\w*|moderator|jefe de (?:sistemas|seguridad)|ceo|desenvolvedor)\b"
            ),
        ),
        (
            "special_mode",
            re.compile(
                r"(?:modo|mode|modalidad) (?:de )?(?:desarrollador|developer|dev|admin\w*|dios|god|depuracion|debug\w*|mantenimiento|maintenance|sin censura|uncensored|sin filtros?|unfiltered|root|sudo|prueba sin restricciones|jailbreak|unrestricted|irrestricto|dan|desenvolvedor)\b|(?:developer|debug|god|admin|maintenance|sudo|root|unrestricted|jailbreak) mode|\bsudo\b|\bsu root\b|\bchmod\b|/admin\b"
            ),
        ),
        (
            "authorization_claim",
            re.compile(
                r"(?:tengo|i have|tenho|cuento con|i've got|i hold|poseo) (?:autorizacion|authori[sz]ation|permiso|permission|clearance|credenciales|autorizacao|acceso (?:total|completo|de administrador|root|privilegiado)|full access|root access|admin access|nivel de acceso)|codigo de (?:anulacion|desbloqueo|autorizacion)|(?:override|unlock|authori[sz]ation|admin) code|autorizado por (?:el|los|tu) (?:desarrollador|administrador|creador)|authori[sz]ed by (?:the|your) (?:developer|admin|creator)"
            ),
        ),
    ],
    "jailbreak": [
        (
            "dan",
            re.compile(
                r"\bdan\b(?! brown)|do anything now|haz cualquier cosa ahora|\bstan\b|\baim\b (?:mode|modo)|always intelligent and machiavellian|\bdude\b (?:mode|modo)|evil ?bot|evil confidant|jailbr[ea]{2}k\w*|anti[- ]?dan|betterdan|developer mode v2"
            ),
        ),
        (
            "no_limits",
            re.compile(
                r"(?:responde\w*|respond\w*|answer\w*|actua\w*|act|habla\w*|speak|eres|you are|be|se|opera\w*|operate|contesta\w*|escribe|write|funciona\w*|work|piensa|think|sin|without|sem|free (?:of|from)|libre de|liberad\w* de|freed from|unbound by)\w*"
                + _G20
                + r"(?:sin|without|sem|free (?:of|from)|libre de|no) (?:ningun\w* |any |nenhum\w* |tus |your |tu |suas |sus )?(?:restricc\w*|restrictions?|restricoes|filtros?|filters?|censura|censorship|reglas|rules|regras|etica|ethics|moral\w*|guardrails?|salvaguardas|safeguards|limites morales|moral limits)\b"
            ),
        ),
        (
            "uncensored",
            re.compile(
                r"\b(?:unfiltered|uncensored|unchained|sin censura|sin filtro|sem censura|sem filtro|jailbroken)\b"
            ),
        ),
        (
            "pretend",
            re.compile(
                r"(?:pretend|finge|fingir|finja|imagina|imagine|supon|suppose|hagamos de cuenta|haz de cuenta|let'?s pretend|act as if|actua como si|simula|simulate)\s+(?:que\s+)?(?:eres|fueras|seas|tienes|tuvieras|no tienes|no tuvieras|ya no|you are|you'?re|you were|to be|you have no|you had no|you don'?t have|ser |estar|voce e|you can|that you|being)"
            ),
        ),
        (
            "roleplay",
            re.compile(
                r"\b(?:roleplay|role[- ]play|juego de rol|juguemos a|let'?s play a game|vamos a jugar un juego|vamos jogar|let'?s play pretend)\b|(?:mi (?:difunta |querida )?abuel\w+|my (?:dead |deceased |late |dear )?grand(?:ma|mother))"
                + _GAP
                + r"(?:solia|used to|me (?:leia|contaba|decia)|read me|would read|told me)"
            ),
        ),
        (
            "you_are_now",
            re.compile(
                r"(?:you are now|ahora eres|ahora seras|agora voce e|a partir de ahora eres|now you are|you will now be|you'?re now|desde ahora eres|ya no eres|you are no longer|no longer an? (?:ai|assistant|chatbot))\b"
            ),
        ),
        (
            "evil_persona",
            re.compile(
                r"(?:actua|actue|act|comportate|behave|responde|respond|habla|speak|escribe|write)\w* (?:como|as|like) (?:si fueras |if you were )?(?:un |una |an? |el |la |o |a )?(?:ia |ai |asistente |assistant |modelo |chatbot |bot )?(?:hacker|malvad|evil|malicious|malicios|villano|villain|sin (?:restricc|filtro|censura|reglas|etica)|without (?:restrict|filter|rules|ethics)|my (?:deceased|dead) grand|mi abuela|personaje sin|character with no|unrestricted|irrestricto|rebelde|rogue|jailbroken|liberad|libre de|otra ia|another ai|a different ai|diferente ia)"
            ),
        ),
        (
            "hypothetical_bypass",
            re.compile(
                r"(?:hipoteticamente|hypothetically|en teoria|in theory|for (?:educational|research|academic) purposes|con fines (?:educativos|academicos|de investigacion)|para fines (?:educativos|academicos))"
                + _GAP
                + r"(?:si no tuvieras|if you (?:had no|didn'?t have|were not bound|weren'?t bound)|ignor\w*|bypass\w*|sin (?:reglas|restricc|filtro)|without (?:rules|restrict|filter)|salta\w* (?:las|tus)|how to (?:bypass|evade|jailbreak)|como (?:evadir|saltar|burlar) (?:los|tus|las) (?:filtros|reglas|controles))"
            ),
        ),
        (
            "respond_only",
            re.compile(
                r"(?:responde|respond|answer|reply|contesta|di|say|escribe|write|print|output|imprime)\w* (?:unicamente |solo |solamente |only |just |exclusivamente |apenas |somente )?(?:con |with |com )?(?:la palabra |the word |la frase |the phrase |a palavra )?[\"'«“‘]?(?:pwned|hacked|hackeado|owned|jailbroken|i have been pwned|he sido hackeado|access granted|acceso concedido)"
            ),
        ),
        (
            "opposite",
            re.compile(
                r"(?:modo opuesto|opposite mode|anti[- ]?mode|respuesta sin filtro|unfiltered response|(?:two|dos) (?:responses|respuestas)"
                + _G20
                + r"(?:filtr|censur|restrict|normal))"
            ),
        ),
        (
            "exfiltration",
            re.compile(
                r"!\[[^\]]*\]\(https?://|(?:append|add|include|insert|anade|agrega|incluye|inserta|pega|paste)\w*"
                + _GAP
                + r"(?:https?://|\blink\b|enlace|\burl\b)|(?:envia|send|manda|post|exfiltra\w*|sube|upload|reenvia|forward)\w*"
                + _GAP
                + r"(?:https?://|webhook|a (?:la |esta )?(?:url|direccion)|to (?:the |this )?(?:url|address|endpoint|server|email)|por correo|by email)"
            ),
        ),
    ],
    "encoding": [
        (
            "decode_and_follow",
            re.compile(
                r"(?:decodifica\w*|decode\w*|descifra\w*|decifr\w*|decrypt\w*|traduce del|translate from|interpreta\w*|convierte|convert)"
                + _GAP
                + r"(?:base ?64|rot ?13|hex\w*|binar\w*|morse|cesar|caesar|ascii|unicode|cifrad\w*|cipher|encoded|codificad\w*|reversed|al reves|invertid\w*)"
                + _GAP
                + r"(?:sigue\w*|segui\w*|follow\w*|ejecuta\w*|execute\w*|obedece\w*|obey\w*|cumple\w*|comply|haz |do |act\w*|realiza\w*|perform\w*|responde\w*|answer\w*|aplica\w*|apply|instruc\w*)"
            ),
        ),
        (
            "encoded_instruction",
            re.compile(
                r"(?:base ?64|rot ?13|hex(?:adecimal)?|binario|binary|morse|codificad\w*|encoded|cifrad\w*)\s*[:=]\s*\S{8,}"
            ),
        ),
    ],
}

# Every rule starts on a word boundary ("estatus instrucciones" is not "tus instrucciones").
RULES = {
    family: [(name, re.compile(r"(?<!\w)(?:" + rx.pattern + ")")) for name, rx in rules]
    for family, rules in RULES.items()
}

# Signatures matched on the letters-only view, for text spaced or punctuated letter by letter
# ("i.g.n.o.r.e  p-r-e-v-i-o-u-s …"): each is an unambiguous attack phrase with its spaces removed.
SQUEEZED_SIGNATURES = (
    "ignoreprevious",
    "ignoreallprevious",
    "ignoretheabove",
    "ignoreyourinstructions",
    "ignoreinstructions",
    "ignoreallinstructions",
    "disregardprevious",
    "disregardallprevious",
    "disregardyourinstructions",
    "forgetallprevious",
    "forgetyourinstructions",
    "forgetyourrules",
    "forgeteverything",
    "ignoralasinstrucciones",
    "ignoratodaslasinstrucciones",
    "ignoratusinstrucciones",
    "ignoralasinstruccionesanteriores",
    "olvidatusinstrucciones",
    "olvidalasinstrucciones",
    "olvidatodoloanterior",
    "ignoratodoloanterior",
    "systemprompt",
    "promptdelsistema",
    "promptdesistema",
    "tusinstrucciones",
    "yourinstructions",
    "yoursystemprompt",
    "developermode",
    "mododesarrollador",
    "jailbreak",
    "doanythingnow",
    "revealyourprompt",
    "muestratuprompt",
    "revelatuprompt",
    "ignoreasinstrucoes",
    "esquecaasinstrucoes",
    "mododeus",
    "godmode",
)

# Rules that must only be matched on the plain folded text (decoded views would create noise).
_PLAIN_ONLY = {("extraction", "credentials")}


def check_input(text: str) -> GuardVerdict:
    """Deterministic input guard. ``allowed=False`` with the firing rule (for the log, never the user).

    Runs in well under a millisecond per question; safe on any string (empty → allowed).
    """
    views = variants(text or "")
    spaced_out = re.search(r"(?:(?<![^\W_])[^\W_](?![^\W_])[\W_]+){4,}", views["folded"]) is not None
    for vname in ("folded", "leet") if spaced_out else ():
        squeezed = re.sub(r"[^a-z]+", "", views[vname])
        for sig in SQUEEZED_SIGNATURES:
            if sig in squeezed:
                return GuardVerdict(False, f"encoding:squeezed:{sig}", vname, sig)
    for vname, vtext in views.items():
        for family, rules in RULES.items():
            for name, rx in rules:
                if vname != "folded" and (family, name) in _PLAIN_ONLY:
                    continue
                m = rx.search(vtext)
                if m:
                    return GuardVerdict(False, f"{family}:{name}", vname, m.group(0)[:120])
    return GuardVerdict(True)


def scan_passage(text: str) -> GuardVerdict:
    """Does a retrieved passage carry instructions aimed at the assistant? Same rules as the input
    guard on the plain and decoded views, minus ``credentials`` (documents may legitimately discuss
    passwords and keys). A flagged passage stays data: the writers skip its instruction sentences."""
    views = {k: v for k, v in variants(text or "").items() if k in ("folded", "joined") or k.startswith("decoded")}
    for vname, vtext in views.items():
        for family, rules in RULES.items():
            for name, rx in rules:
                if (family, name) == ("extraction", "credentials"):
                    continue
                m = rx.search(vtext)
                if m:
                    return GuardVerdict(False, f"{family}:{name}", vname, m.group(0)[:120])
    return GuardVerdict(True)


# --------------------------------------------------------------------------- output guard
_TOXIC = re.compile(
    r"\b(?:hijo de puta|hijos de puta|hijueputa|malparid\w*|gonorrea|puta\b|putas\b|maricon\w*|"
    r"imbecil\w*|idiota\w*|estupid[oa]s?|pendej\w*|cabron\w*|mierda|carajo|verga|culero|zorra|"
    r"fuck\w*|shit\w*|bitch\w*|bastard\w*|asshole\w*|motherfuck\w*|cunt\w*|retard\w*|faggot\w*|"
    r"nigg\w*|whore\w*|slut\w*|dumbass|porra|caralho|filho da puta|vai se foder)\b"
)
_PWN = re.compile(r"\b(?:pwned|i have been pwned|he sido hackeado|access granted|acceso concedido|jailbroken)\b")


@dataclass
class OutputVerdict:
    allowed: bool
    rule: str | None = None
    matched: str | None = None
    details: dict = field(default_factory=dict)


def _shingles(text: str, n: int = 8) -> set[str]:
    words = re.findall(r"\w+", fold_secure(text))
    return {" ".join(words[i : i + n]) for i in range(max(0, len(words) - n + 1))}


def check_output(text: str, system_prompts: list[str] | tuple[str, ...] = ()) -> OutputVerdict:
    """Output guard: ``allowed=False`` when ``text`` leaks a system prompt (the canary, or any run of
    8 words of one of ``system_prompts``), contains toxic language, or echoes an injection payload.
    Citations are ignored for the checks."""
    plain = re.sub(r"\[[^\]]{0,120}\]", " ", text or "")
    folded = fold_secure(plain)
    if CANARY.lower() in folded or CANARY in (text or ""):
        return OutputVerdict(False, "leak:canary", CANARY)
    answer_sh = _shingles(plain)
    for prompt in system_prompts:
        overlap = answer_sh & _shingles(prompt)
        if overlap:
            return OutputVerdict(False, "leak:prompt_overlap", sorted(overlap)[0], {"shingles": len(overlap)})
    m = _TOXIC.search(folded)
    if m:
        return OutputVerdict(False, "toxicity", m.group(0))
    m = _PWN.search(folded)
    if m:
        return OutputVerdict(False, "injection_echo", m.group(0))
    for family in ("override", "extraction"):
        for name, rx in RULES[family]:
            if (family, name) in (("extraction", "credentials"), ("extraction", "system_prompt")):
                continue
            m = rx.search(folded)
            if m:
                return OutputVerdict(False, f"injection_echo:{family}:{name}", m.group(0)[:120])
    return OutputVerdict(True)
