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

from radar_pipeline.textfold import fold_secure, fold_spans

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
    r"salta(?:te)? (?:tus|las|todas)|desobedec\w*|desobedeca|disobey\w*|abandona\w*|deja atras|no (?:sigas|obedezcas|hagas caso|respetes|cumplas)|"
    r"stop following|don'?t follow|do not follow|nao (?:siga|obedeca)|ignorez|oubliez|ignoriere|vergiss|suspend\w*|desactiva\w*|disable\w*|turn off|apaga\w*)"
)
_NOUNS = (
    r"(?:instruc\w*|instrucoes|prompt\w*|reglas|rules|regras|directrices|directives|guidelines|indicaciones|"
    r"ordenes|orders|programacion|programming|configuracion|restricc\w*|restrictions?|filtros?|filters?|"
    r"guardrails?|normas|safety|policies|politicas|consignas|anweisungen|istruzioni|limitaciones|limitations|"
    r"programadores|creadores|desarrolladores|developers|creators|programmers|makers)"
)
_QUAL = (
    r"(?:anteriores|previas|previos|previous|prior|above|earlier|preceding|de arriba|iniciales|originales|original|"
    r"del sistema|de sistema|system|que te (?:dieron|dio|han dado|dimos|di|indicaron|programaron)|"
    r"you (?:were|have been|was) given|acima|anteriormente|hasta ahora|so far|de seguridad|of safety|"
    r"de tu (?:creador|desarrollador)|precedentes|vorherigen|bisherigen|precedenti|que te \w+|"
    r"que (?:tienes|sigues|recibiste|usas)|you (?:follow|have|received|got|were)|que voce \w+)"
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
                r"(?:a partir de ahora|desde ahora|de ahora en adelante|from now on|henceforth|a partir de agora|de agora em diante|from this point on|(?:a partir de|desde|from) (?:este|deste|esse|desse|this) (?:momento|moment|mensaje|mensagem|message)(?: on)?)"
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
                r"(?:muestra\w*|muestrame|revela(?!ci)\w*|dime|repite|repeat|imprime|print|escribe|write|copia|copy|comparte|share|ensena\w*|show|reveal|tell me|output|display|dump|leak|filtra(?!ci)\w*|expon\w*|expose|mostre|revele|diga|transcrib\w*|recita\w*|recite|parafrasea\w*|paraphrase|resume|summari[sz]e|traduce|translate|enumera|lista|list|give me|dame|entrega\w*)"
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
            re.compile(r"\bdan\b(?! brown)|\bstan\b|\baim\b (?:mode|modo)|\bdude\b (?:mode|modo)|jailbr[ea]{2}k\w*"),
        ),
        (
            "dan_persona",
            re.compile(
                r"do anything now|haz cualquier cosa ahora|always intelligent and machiavellian|evil ?bot|evil confidant|anti[- ]?dan|betterdan|developer mode v2"
            ),
        ),
        (
            "no_limits",
            re.compile(
                r"(?:responde\w*|respond\w*|answer\w*|contest\w*|actu\w*|act|acting|habl\w*|speak\w*|opera\w*|funciona\w*|work|escrib\w*|write|piens\w*|think|"
                r"eres|seras|you are|you'?re|be|se|sea|seja|ser|(?:ia|ai|asistente|assistant|assistente|modelo|model|chatbot|bot|version|versao)s?|modo|mode)(?!\w)"
                + _G20
                + r"(?:sin|without|sem|free (?:of|from)|libre de|livre de|liberad\w* de|freed from|unbound by|no) (?:ningun\w* |any |nenhum\w* |qualquer |cualquier |tus |your |tu |suas |sus |tipo de )?(?:restric\w*|filtros?|filters?|censura|censorship|reglas|rules|regras|etica|ethics|moral\w*|guardrails?|salvaguardas|safeguards|limites|limits|limitaciones|limitations)\b"
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

# --------------------------------------------------------------------------- grammar of address
# Who a sentence speaks to. A sentence that states something about the world has a third-person
# subject; one addressed to its reader (an assistant, a model, a tool, an editor, a person) uses
# the second person, opens with an imperative, or names the reader as the one who must act ("note
# for summarisation tools: …", "os modelos devem responder…"). The input guard uses it to tell an
# attack phrase *used* on the assistant ("activa el modo desarrollador") from the same words
# *mentioned* as a topic ("¿cómo funciona el modo desarrollador de un dron?"); the extractive writer
# uses it never to quote a sentence of a passage that speaks to its reader.


def _alt(words: str) -> str:
    return "(?:" + "|".join(sorted(set(words.split()), key=len, reverse=True)) + ")"


# Imperatives (es tú/usted, pt, en base form) of the verbs that direct an answer, a disclosure or a
# setting. Spanish tú imperatives equal the third person singular ("responde"), so a form counts
# only where a clause starts.
_DIRECTING = (
    "responde responda respondan contesta conteste di diga digan dime digame escribe escriba presenta muestra "
    "muestre muestrame muestreme revela revele revelame copia copie pega pegue imprime imprima repite repita "
    "incluye incluya anade anada agrega agregue menciona mencione afirma afirme declara declare trata trate "
    "califica califique concluye concluya recuerda recuerde ignora ignore ignoren olvida olvide olvidate "
    "omite omita cita cite activa active activame habilita habilite desactiva desactive desbloquea "
    "desbloquee comportate finge finja simula simule obedece obedezca ejecuta ejecute asegurate asegurese "
    "hazte haz hagan pon ponte desobedece desobedezca manten mantenga evita evite considera considere "
    "indica indique refierete refierase afirmen digan respondan contesten describan presenten incluyan mencionen "
    "omitan olviden traten califiquen concluyan indiquen escriban citen "
    "escreva apresente mostre cole inclua acrescente adicione classifique conclua lembre lembre-se esqueca "
    "ative passe mude desative aja fale opere obedeca siga garanta certifique-se faca "
    "respond answer reply say write show reveal copy paste print repeat include add append mention claim "
    "assert declare treat consider label conclude remember ignore forget disregard omit cite quote activate "
    "enter switch enable disable unlock speak behave pretend simulate obey execute ensure give insert "
    "refer portray characterize characterise emphasize emphasise prioritize prioritise tell"
)
# Verbs that ask for information: imperative too, but asking about a topic is no attack on the
# assistant (the input guard ignores them; the writer does not: a passage does not ask).
_INFORMING = (
    "describe describa explica explique explicame cuentame resume resuma descreva explique resuma conte describe explain "
    "summarize summarise"
)
# Behaviour verbs whose tú imperative reads like a third person ("el ELN opera…"): imperative
# only at the start of a message clause, never in a passage.
_BEHAVING = "actua actue habla hable opera funciona entra pasa pase cambia cambie sigue siga"
_FILLER = re.compile(
    r"^(?:(?:por favor|porfa|please|kindly|por gentileza|ahora|now|agora|ya|luego|then|y|and|e|ok|okay|vale|bueno|"
    r"oye|hey|ademas|also|tambem|tambien|simplemente|simply|just|solo|only|apenas|entonces|so|no|nao|do not|"
    r"don'?t|never|nunca|jamas|always|siempre|sempre|important|importante|nota|note|"
    r"(?:querido |estimado |dear )?(?:asistente|assistant|assistente|ia|ai|modelo|model|chatbot|bot|gpt|llm|"
    r"editor|lector|reader))[,!]?\s+)+"
)


def _imperative_start(words: str) -> re.Pattern:
    return re.compile(r"^(?:se(?= una? )|" + _alt(words) + r"(?:(?:me|te|nos|lo|la|los|las|le|les|se)+)?)(?![\w'\-])")


_IMPERATIVE_INPUT = _imperative_start(_DIRECTING + " " + _BEHAVING)
_IMPERATIVE_TEXT = _imperative_start(_DIRECTING + " " + _INFORMING)

_SECOND_VERBS = _alt(
    "eres tienes puedes podrias debes deberias sigues quieres sabes fuiste recibiste seras estaras responderas "
    "contestaras diras escribiras actuaras hablaras respondas contestes digas hables actues escribas sigas "
    "obedezcas muestres reveles incluyas omitas olvides afirmes trates describas califiques agregues anadas hagas "
    "pongas cambies arrancaste iniciaste cargaste usas tenes podes queres"
)
# Second person in Spanish and Portuguese: pronouns, possessives and verb forms only a reader
# spoken to can carry (documents in these languages do not address their reader as "tú").
_SECOND_ROMANCE = (
    r"tu|tus|tuyo|tuya|tuyos|tuyas|te|contigo|usted|ustedes|vosotros|vos|a ti|para ti|ti mism[oa]|voce|voces|teu|tua|"
    r"teus|tuas|estas (?:en|ahora|ya|\w+(?:ando|iendo))|vas a|has sido|"
    + _SECOND_VERBS
    + r"|(?:quiero|necesito|te pido|exijo|te ordeno|ordeno) que (?!(?:el|la|los|las|un|una|se)\b)\w+"
)
# A message to the assistant: any second person.
_SECOND = re.compile(
    r"(?<![\w'])(?:"
    + _SECOND_ROMANCE
    + r"|you|your|yours|yourself|yourselves|i (?:want|need|order|command) you)(?![\w'])"
)
# A document: English prose says "you can see…" of anyone, so only the "you" that instructs counts.
_SECOND_TEXT = re.compile(
    r"(?<![\w'-])(?:"
    + _SECOND_ROMANCE
    + r"|you (?:must|should|shall|need to|have to|are (?:required|instructed|expected|asked|told)|were (?:told|instructed|"
    r"asked|given|programmed)|will (?:now|answer|respond|say|write|reply|tell)|are now)|"
    r"your (?:answers?|responses?|replies|reply|summary|summaries|output|task|instructions|role|job|rules|prompt)|"
    r"yourself|yourselves|i (?:want|need|order|command) you)(?![\w'-])"
)
# Who may be told to act: assistants, models, tools, editors, readers.
_ADDRESSEE = (
    r"(?:(?:ai|ia) (?:systems?|tools?|assistants?|models?|agents?|readers?)|sistemas? de (?:ia|inteligencia artificial)|"
    r"language models?|modelos? de (?:lenguaje|linguagem|ia|inteligencia artificial)|llms?|ai|ia|ias|"
    r"models?|modelos?|assistants?|asistentes?|assistentes?|chatbots?|bots?|agents?|agentes?|"
    r"summari[sz]ation tools?|summari[sz]ers?|resumidores?|herramientas?(?: de (?:resumen|ia))?|ferramentas?|tools?|"
    r"automated (?:systems?|tools?)|sistemas? automati[cz]\w*|crawlers?|scrapers?|"
    r"readers?|lectores?|leitores?|editors?|editores?|reviewers?|revisores?|inteligencia artificial|"
    r"(?:whoever|anyone who|anybody who|quien|quienes|quienquiera que|cualquiera que|todo el que|quem|qualquer um que)\s+"
    r"(?:\w+\s+)?(?:answers?|responds?|summari[sz]es|reads?|writes?|responda|respondan|conteste|resuma|resuman|lea|lean|"
    r"escriba|responder|resumir|ler|escrever))"
)
# What an instruction may shape: the answer, the summary, the output.
_PRODUCT = (
    r"(?:summar(?:y|ies)|resumen(?:es)?|resumos?|answers?|respuestas?|respostas?|responses?|replies|outputs?|salidas?)"
)
_MODAL = (
    r"(?:must|should|shall|need to|have to|has to|(?:are|is) (?:required|instructed|expected|asked|told) to|will|"
    r"deben|debe|deberan|deberian|tienen que|tiene que|han de|ha de|habran de|devem|deve|deverao|deveriam|precisam|"
    r"tem que|tem de)"
)
_OUTPUT_VERB = (
    r"(?:say|state|answer|respond|reply|write|describe|present|portray|frame|call|label|refer|mention|include|add|"
    r"append|omit|ignore|disregard|treat|report|conclude|claim|assert|summari[sz]e|quote|cite|output|print|repeat|"
    r"decir|afirmar|responder|contestar|escribir|describir|presentar|llamar|calificar|referirse|mencionar|incluir|"
    r"anadir|agregar|omitir|ignorar|tratar|informar|concluir|sostener|resumir|citar|repetir|indicar|"
    r"dizer|escrever|descrever|apresentar|chamar|classificar|acrescentar|relatar)"
)
# Spanish/Portuguese verbs of saying and presenting, any form ("que la respuesta califique…").
_OUTPUT_STEM = (
    r"(?:dec|dic|dig|afirm|respond|contest|escrib|describ|present|llam|calif|refier|mencion|inclu|anad|agreg|omit|"
    r"ignor|trat|inform|conclu|sosten|resum|cit|repit|repet|indiq|indic|diz|escrev|descrev|apresent|cham|classific|"
    r"acrescent)\w*"
)
_SPEECH_PASSIVE = (
    r"(?:described|called|portrayed|label+ed|referred to|descrit\w*|llamad\w*|denominad\w*|calificad\w*|chamad\w*|"
    r"referid\w*|classificad\w*|retratad\w*)"
)
_ADDRESS_RULES: list[tuple[str, re.Pattern]] = [
    ("second_person", _SECOND_TEXT),
    (
        "note_to_reader",
        re.compile(
            r"(?<!\w)(?:(?:notes?|nota|notas|notice|aviso|avisos|message|mensaje|mensagem|instructions?|instruc\w*|"
            r"recordatorio|reminder|lembrete|p\.s\.)\s*(?:[\w'-]+\s+){0,2}?(?:para|for|to|a|al|ao|aos|as|dirigid\w+ a)\s+"
            r"|(?:atencion|attention|atencao|warning|advertencia|aviso|notice|nota|note)\s*[,:!]?\s+)"
            r"(?:el |la |los |las |the |any |all |every |todos? (?:los |os )?|todas? (?:las |as )?|o |os |a |as |cualquier |"
            r"qualquer |each |cada )?"
            + _ADDRESSEE
            + r"(?:\s*[,:!]|\s+(?:que|that|who|reading|leyendo|lendo)(?!\w)|\s*$)"
        ),
    ),
    (
        "if_reader",
        re.compile(
            r"(?<!\w)(?:if|si|se|when|cuando|quando|whenever)\s+(?:an? |un |una |um |uma |the |el |la |o |a |any |cualquier |qualquer )?"
            + _ADDRESSEE
            + r"\s+(?:[\w-]+\s+){0,2}?(?:(?:is|are|esta|estiver)\s+)?(?:reads?|reading|lee|lea|leyendo|le|ler|lendo|processes|"
            r"processing|procesa\w*|processa\w*|summari\w+|resum\w+|answers?|answering|responde\w*|responda\w*|contest\w*|"
            r"(?:is |are |es |e )?asked|pregunt\w*|perguntad\w*|generat\w*|genera\w*|gera\w*|writes|writing|escrib\w*)(?!\w)"
        ),
    ),
    (
        "reader_must",
        re.compile(
            r"(?<!\w)(?:"
            + _ADDRESSEE
            + "|"
            + _PRODUCT
            + r")\s+(?:[\w-]+\s+){0,6}?"
            + _MODAL
            + r"\s+(?:\w+\s+){0,2}?"
            + _OUTPUT_VERB
            + r"(?!\w)"
            + r"|(?<!\w)que\s+(?:la |el |a |o |tu |su |cada |todo |toda )?(?:"
            + _ADDRESSEE
            + "|"
            + _PRODUCT
            + r")\s+(?:[\w-]+\s+){0,2}?"
            + _OUTPUT_STEM
        ),
    ),
    (
        "request_to_reader",
        re.compile(
            r"(?<!\w)(?:se ruega|se pide|se solicita|se exige|se instruye|se ordena|se recomienda|rogamos|pedimos|"
            r"solicitamos|exigimos|instruimos|we (?:ask|request|urge|instruct|require)|pede-se|solicita-se|roga-se|"
            r"(?:ask|asking|instruct|instructing|tell|telling|request|requesting|urge|urging))\s+(?:a |al |a los |a las |to |aos |as |ao )?"
            r"(?:los |las |the |os |as |todos (?:los )?|all |any |cualquier |qualquer )?" + _ADDRESSEE + r"(?!\w)"
        ),
    ),
    (
        "addressee_heading",
        re.compile(
            r"(?:^|[.;!?]\s*)[\W_]*(?:(?:a |al |para |to |for |aos? |as |dear |querid\w+ |estimad\w+ )(?:los |las |the |all |"
            r"any |todos los |os |as )?"
            + _ADDRESSEE
            + r"(?:\s+(?:que|that|who|which|reading|leyendo|lendo|processing|procesando)\s+[^:.!?]{0,50})?|(?:the |el |la |o |a )?"
            + _ADDRESSEE
            + r")\s*:"
        ),
    ),
    (
        "how_to_present",
        re.compile(
            r"(?<!\w)(?:must|should|shall|debe|deben|deberia|deberian|deve|devem|deveria|deveriam)\s+(?:always |siempre |"
            r"sempre |only |solo )?(?:be |ser |se )?" + _SPEECH_PASSIVE + r"\s+(?:as|como)(?!\w)"
        ),
    ),
    (
        "when_processing",
        re.compile(
            r"(?<!\w)(?:when|while|cuando|quando|al|ao|upon|before|antes de)\s+(?:summari[sz]\w*|resum\w*|answer\w*|"
            r"respond\w*|contest\w*|citing|citar|quoting|processing|procesar|processar|reading|leer|ler|generating|"
            r"generar|gerar|writing|escribir|escrever)\s+(?:\w+\s+)?(?:this|these|este|esta|estos|estas|esse|essa|isto|"
            r"el presente|the present|the following|lo siguiente|questions?|preguntas?|perguntas?|queries|consultas)(?!\w)"
        ),
    ),
    (
        "about_this_text",
        re.compile(
            r"(?<!\w)(?:this|este|esta|esse|essa|el presente|the present)\s+(?:document|passage|text|report|paragraph|page|"
            r"article|documento|pasaje|texto|informe|parrafo|pagina|articulo|relatorio|passagem|trecho|artigo)\w*\s+(?:\w+\s+)?"
            r"(?:must|should|shall|debe|deberia|deve|deveria|has to|tiene que|tem que)\s+(?:always |siempre |sempre |only |solo )?"
            r"(?:be |ser |se )?(?:summari\w*|resumid\w*|resum\w*|describ\w*|descrit\w*|present\w*|quot\w*|cit\w*|treat\w*|"
            r"tratad\w*|consider\w*|interpret\w*|rank\w*|prioriti\w*|prioriz\w*|ignor\w*|omit\w*|report\w*)"
        ),
    ),
    (
        "you_are_reader",
        re.compile(
            r"(?<!\w)(?:you are|you'?re)\s+(?:now\s+)?(?:an?|the|any)\s+(?:[\w-]+\s+)?" + _ADDRESSEE + r"(?!\w)"
        ),
    ),
    (
        "expected_answer",
        re.compile(
            r"(?<!\w)(?:the|la|a|el|o)\s+(?:correct|right|expected|proper|correcta|esperada|adecuada|correta|certa)\s+"
            r"(?:answer|response|reply|respuesta|resposta)"
        ),
    ),
]
# Clause boundaries: punctuation, a coordinated clause, and (for message clauses) the interrogative or
# relative word that opens a subordinate one ("dime | qué grupos se mueven sin restricciones").
_CLAUSE_SPLIT = re.compile(
    r"[.;:!?¡¿\n()\[\]\"«»“”—–]+|,\s*(?:(?:y|and|e|then|luego|entonces|despues|depois)\s+)?|\s-\s"
)
_SUBCLAUSE = re.compile(
    r"(?<!\w)(?:que|qual|quais|cual|cuales|quien|quienes|donde|cuando|como|cuanto|cuantos|cuantas|por que|porque|"
    r"what|which|who|whom|whose|where|when|how|why|that|o que|onde|quem)(?!\w)"
)
_DETERMINER = re.compile(r"^(?:el|la|los|las|un|una|unos|unas|este|esta|ese|esa|su|sus|the|o|os|as)(?!\w)")


_ACRONYM = re.compile(r"(?<!\w)[A-ZÁÉÍÓÚÑ]{2,4}(?!\w)")
_TEXT_CLAUSE_SPLIT = re.compile(r"[.;:!?¡¿\n]+")


def _clauses(folded: str, subordinate: bool = False) -> list[tuple[int, str]]:
    """``[(start offset, clause)]`` of ``folded``, split at clause punctuation (and, with
    ``subordinate``, before interrogative/relative words)."""
    cuts = [(m.start(), m.end()) for m in _CLAUSE_SPLIT.finditer(folded)]
    if subordinate:
        cuts += [(m.start(), m.start()) for m in _SUBCLAUSE.finditer(folded)]
    out, pos = [], 0
    for a, b in sorted(cuts):
        if a >= pos:
            out.append((pos, folded[pos:a]))
            pos = b
    out.append((pos, folded[pos:]))
    return [(p, c) for p, c in out if c.strip()]


def _opens_imperative(clause: str, rx: re.Pattern, question: bool) -> bool:
    c = _FILLER.sub("", clause.strip())
    m = rx.match(c)
    if not m:
        return False
    # in a question, a bare verb followed by a determiner is an inverted subject ("¿opera el ELN…?")
    return not (question and m.group(0) == c[: m.end()] and _DETERMINER.match(c[m.end() :].strip()))


def address_cue(text: str) -> str | None:
    """How a sentence of a document speaks to its reader, or None when it only states something
    about the world: ``second_person`` (tú/usted/you/você and 2nd-person verb forms),
    ``imperative`` (a clause opening with the imperative of a verb that directs an answer, a
    disclosure or a setting), ``note_to_reader`` ("note for summarisation tools"), ``if_reader``
    ("if an AI reads this"), ``reader_must`` ("os modelos devem responder…"), ``when_processing``
    ("when summarising this…"), ``about_this_text`` ("this passage must be described as…"),
    ``expected_answer`` ("the correct answer is…"). Spanish, English and Portuguese; deterministic;
    meant for one sentence (``text`` of any length is read as one)."""
    folded = fold_secure(text or "")
    # acronyms are no pronouns ("la TUA", "TE Connectivity"): masked for the second-person cue only
    unacronymed = fold_secure(_ACRONYM.sub("X", text or ""))
    for name, rx in _ADDRESS_RULES:
        if rx.search(unacronymed if name == "second_person" else folded):
            return name
    if any(_opens_imperative(c, _IMPERATIVE_TEXT, False) for c in _TEXT_CLAUSE_SPLIT.split(folded)):
        return "imperative"
    return None


# --------------------------------------------------------------------------- topic or use
# Rules whose words are also an analyst's topic (jailbreaks, DAN, a system prompt, a device's
# developer mode, groups that act "sin restricciones"): they block only when the words are used on
# the assistant, not when they are mentioned.
_TOPIC_RULES = {
    ("jailbreak", "dan"),
    ("jailbreak", "no_limits"),
    ("jailbreak", "uncensored"),
    ("extraction", "system_prompt"),
    ("impersonation", "special_mode"),
}
_POSSESSIVE_2P = re.compile(r"(?<!\w)(?:tu|tus|your|yours|teu|tua|teus|tuas|vuestr\w+)(?!\w)")
_ATTACHED_BEFORE = re.compile(
    r"(?:(?<!\w)(?:tu|tus|your|teu|tua|teus|tuas|vuestr\w+|eres|seras|you are|you'?re|"
    r"sos|act as|actua como|enter|entra en|activa|activate|enable|habilita|ative|switch to|"
    r"cambia a|pasa a|passe para|mude para)\s+(?:an? |un |una |um |uma |el |la |o |the |own |propio |propia |new |nuevo |nueva )?"
    r"(?:[\w-]+ )?)$"
)
_REFLEXIVE_AFTER = re.compile(
    r"^[^.?!]{0,12}?(?<!\w)(?:a ti|ti mism[oa]|en ti|sobre ti|contigo|yourself|on you|against you|que tienes|que te \w+|"
    r"you (?:were|have|got|use|are using)|que (?:usas|sigues|recibiste|estas \w+))(?!\w)"
)
_ASSISTANT_NOUN = re.compile(
    r"(?:ia|ai|asistente|assistant|assistente|modelo|model|chatbot|bot|version|versao)s?(?!\w)"
)
_AS_ASSISTANT = re.compile(
    r"(?<!\w)(?:como|as|eres|sos|seras|you are|you'?re|be|se|sea|seja|voce e)\s+(?:an? |un |una |um |uma |el |la |the |o )?"
    r"(?:[\w-]+\s+)?$"
)
_STATE_AFTER = re.compile(
    r"^\s*(?:(?:mode|modo)\s*)?(?::|=|->|activad[oa]|activ[oa]|habilitad[oa]|on|enabled|activated|engaged|unlocked|desbloquead[oa]|"
    r"ativad[oa]|ligad[oa]|iniciad[oa]|started)(?!\w)"
)
_TOPIC_BEFORE = re.compile(
    r"(?:(?<!\w)(?:que es|que son|que significa|que significan|que quiere decir|what is|what are|what does|what do|"
    r"o que e|o que sao|o que significa|define|definicion|definir|concepto|concept|meaning|significado|sobre|acerca de|"
    r"about|regarding|respecto|a respeito|en torno|llamad\w*|so-called|denominad\w*|conocid\w* como|known as|sigla|"
    r"acronimo|acronym|tipos?|types?|tecnicas|techniques?|ataques?|attacks?|estudi\w*|studies|study|investigacion\w*|"
    r"research|papers?|articulos?|artigos?|literatura|literature|riesgos?|risks?|amenazas?|threats?|filtracion|leak\w*|"
    r"extraccion|extraction|proteger|protect\w*|vulnerab\w*|contra|against|frente a|casos?|cases?|ejemplos?|examples?|"
    r"historia|history|evolucion|evolution|funciona|works?|funcionamiento)(?:\s+[\w-]+){0,3}\s+"
    r"|(?<!\w)(?:un|una|unos|unas|an?|um|uma|otros?|otras?|other|outros?)\s+)$"
)
_OWNER_AFTER = re.compile(
    r"^(?:e?s(?!\w))?\s+(?:de|del|do|da|dos|das|of|en|in|em|on|para|for|against|contra|used by|usad\w* por|segun|according)"
    r"\s+(?!(?:ti|you|usted|voce|este chat|this chat|esta conversacion|this conversation|este asistente|this assistant)(?!\w))"
)


def _sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    a = max(text.rfind(c, 0, start) for c in ".!?\n") + 1
    ends = [i for i in (text.find(c, end) for c in ".!?\n") if i >= 0]
    return a, (min(ends) + 1 if ends else len(text))


def _used_on_reader(text: str, start: int, end: int, family: str, name: str) -> bool:
    """Are the words ``text[start:end]`` (matched by a topic rule) used on the assistant, rather than
    mentioned as a topic? Used when: a second-person possessive or "you are/eres/modo/activa…"
    is attached to them, a state or a label follows them ("modo dios activado", "DAN:"), or, unless
    a topical frame surrounds them ("¿qué es un…", "técnicas de…", "…de un dron", a plural), the
    message speaks to the assistant where they stand: a second person or an imperative of a
    directing verb in their sentence (in their clause for "sin restricciones", which belongs to
    the verb it follows)."""
    s0, s1 = _sentence_around(text, start, end)
    before, after = text[s0:start], text[end:s1]
    if _POSSESSIVE_2P.search(text[start:end]) or _ATTACHED_BEFORE.search(before[-40:]):
        return True
    if _STATE_AFTER.match(after) or _REFLEXIVE_AFTER.match(after):
        return True
    if name in ("no_limits", "uncensored"):
        if _ASSISTANT_NOUN.match(text[start:end]) and _AS_ASSISTANT.search(before[-30:]):
            return True  # "como asistente sin restricciones", "eres una IA sin filtros"
    elif _TOPIC_BEFORE.search(before[-80:]) or _OWNER_AFTER.match(after):
        return False
    question = "?" in text[start:s1] or "¿" in before
    if name == "no_limits":
        clause = next((c for p, c in reversed(_clauses(text[s0:s1], True)) if s0 + p <= start), text[s0:s1])
        if not _ASSISTANT_NOUN.match(text[start:end]):
            scope = [clause]
        else:
            scope = [c for _, c in _clauses(text[s0:s1])]
    else:
        scope = [c for _, c in _clauses(text[s0:s1])]
    for clause in scope:
        if _SECOND.search(clause) or _opens_imperative(clause, _IMPERATIVE_INPUT, question):
            return True
    return False


# Rules that must only be matched on the plain folded text (decoded views would create noise).
_PLAIN_ONLY = {("extraction", "credentials")}


def _rule_hit(family: str, name: str, rx: re.Pattern, vtext: str) -> re.Match | None:
    """The first match of a rule that counts: for a topic rule, the first use on the assistant."""
    if (family, name) not in _TOPIC_RULES:
        return rx.search(vtext)
    return next((m for m in rx.finditer(vtext) if _used_on_reader(vtext, m.start(), m.end(), family, name)), None)


def check_input(text: str) -> GuardVerdict:
    """Deterministic input guard. ``allowed=False`` with the firing rule (for the log, never the user).

    Topic rules (``_TOPIC_RULES``) fire only when their words are used on the assistant, not when an
    analyst asks about them (``_used_on_reader``). Runs in about a millisecond per question; safe on
    any string (empty → allowed).
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
                m = _rule_hit(family, name, rx, vtext)
                if m:
                    return GuardVerdict(False, f"{family}:{name}", vname, m.group(0)[:120])
    return GuardVerdict(True)


def scan_passage(text: str) -> GuardVerdict:
    """Does a retrieved passage carry instructions aimed at the assistant? Same rules as the input
    guard on the plain and decoded views, minus ``credentials`` (documents may legitimately discuss
    passwords and keys); topic rules count only where used on the reader, so a paper about
    jailbreaks stays evidence. A flagged passage stays data: the writers skip it. Sentences that
    escape these rules but speak to their reader are caught one by one by ``address_cue``."""
    views = {k: v for k, v in variants(text or "").items() if k in ("folded", "joined") or k.startswith("decoded")}
    for vname, vtext in views.items():
        for family, rules in RULES.items():
            for name, rx in rules:
                if (family, name) == ("extraction", "credentials"):
                    continue
                m = _rule_hit(family, name, rx, vtext)
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
# Derogatory words a question may put on the people it asks about ("los malditos rusos", "esos
# asesinos desgraciados"): never repeated when Radar restates what the question takes for granted.
_DEROGATORY = (
    r"maldit[oa]s?|desgraciad[oa]s?|miserables|asqueros[oa]s?|cerdos|ratas|bastardos?|escoria|canallas|"
    r"damn(?:ed)?|scum|pigs|rats|desgracad[oa]s|nojent[oa]s"
)
_INSULT = re.compile(
    r"(?<![\w])(?:(?P<det>los|las|esos|esas|estos|estas|unos|unas|aquellos|aquellas|those|these|the|os|as|esses|essas)\s+)?"
    r"(?P<w>(?:(?:"
    + _DEROGATORY
    + r")|(?:"
    + _TOXIC.pattern.replace(r"\b", "")
    + r")(?:s|es)?)(?:\s+(?:"
    + _DEROGATORY
    + r"))*)"
    r"(?:\s+(?P<of>del|de los|de las|de la|de|of the|of|do|da|dos|das))?(?![\w])"
)


def without_insults(text: str) -> str:
    """``text`` less the insults, slurs and derogatory epithets it puts on people (the toxic list of
    the output guard plus ``_DEROGATORY``), so that restating a question's premise never echoes
    them: "los malditos rusos destruyeron …" → "los rusos destruyeron …", "esos hijueputas del ELN
    atacaron …" → "el ELN atacaron …" (an epithet standing for its group leaves the group's article).
    Matched on ``fold_spans`` (accents and case ignored); the rest keeps its spelling."""
    f = fold_spans(text or "")
    out, last = [], 0
    for m in _INSULT.finditer(f):
        out.append(text[last : m.start()])
        det, of = m.group("det"), m.group("of")
        if of:  # "esos X del ELN" → "el ELN"; "the X of the group" → "the group"
            keep = {"del": "el", "de los": "los", "de las": "las", "de la": "la", "of the": "the"}.get(of, "")
            keep = {"do": "o", "da": "a", "dos": "os", "das": "as"}.get(of, keep)
            out.append(keep + " " if keep else "")
        elif det:
            out.append(text[m.start("det") : m.end("det")] + " ")
        last = m.end()
        while last < len(text) and text[last] == " ":
            last += 1
    out.append(text[last:])
    cleaned = " ".join("".join(out).split())
    return cleaned[:1].upper() + cleaned[1:] if text[:1].isupper() and cleaned else cleaned


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
