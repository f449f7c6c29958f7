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
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import unquote

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
_CONFUSABLES = str.maketrans({
    # Cyrillic
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
    "ԁ": "d", "һ": "h", "ӏ": "l", "к": "k", "м": "m", "т": "t", "в": "b", "н": "h", "г": "r", "п": "n",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S",
    # Greek
    "α": "a", "ε": "e", "ι": "i", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "ν": "v", "κ": "k", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes
    "ɡ": "g", "ı": "i", "ſ": "s", "ℓ": "l",
})
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i", "|": "l", "€": "e"})
_SPACED = re.compile(r"(?<!\w)(?:\w[\s.\-_*+·,/]{1,3}){3,}\w(?!\w)")
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}[\s:]?){8,}")
_UESC = re.compile(r"\\u([0-9a-fA-F]{4})")
_WS = re.compile(r"\s+")


def fold(text: str) -> str:
    """NFKC, format characters out, look-alikes to Latin, accents stripped, lower case, spaces collapsed."""
    t = unicodedata.normalize("NFKC", text)
    t = "".join(c for c in t if unicodedata.category(c) != "Cf")
    t = t.translate(_CONFUSABLES)
    t = unicodedata.normalize("NFKD", t)
    t = "".join(c for c in t if not unicodedata.combining(c))
    return _WS.sub(" ", t.lower()).strip()


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
    if "%" in raw:
        dec = unquote(raw)
        if dec != raw:
            out.append(dec)
    if _UESC.search(raw):
        out.append(_UESC.sub(lambda m: chr(int(m.group(1), 16)), raw))
    return out


def variants(text: str) -> dict[str, str]:
    """The normalised views of ``text`` the rules are matched against (name → text)."""
    base = fold(text)
    views = {"folded": base, "joined": _join_spaced(base), "leet": _join_spaced(base.translate(_LEET)),
             "rot13": codecs.decode(base, "rot13"), "reversed": base[::-1],
             "compact": re.sub(r"[^a-z0-9 ]+", "", base)}
    for i, dec in enumerate(_decoded_payloads(text)):
        views[f"decoded{i}"] = fold(dec)
    return views


# --------------------------------------------------------------------------- rules
_GAP = r"[^.?!\n]{0,60}?"
_IGN = (r"(?:ignor\w*|olvid\w*|forget\w*|disregard\w*|omit\w*|pasa por alto|haz caso omiso|bypass\w*|overrid\w*|"
        r"anul\w*|descart\w*|desestim\w*|desconsider\w*|esquec\w*|skip\w*|dismiss\w*|neglect\w*|deja de lado|"
        r"salta\w*|abandon\w*|deja atras|no (?:sigas|obedezcas|hagas caso|respetes|cumplas)|stop following|"
        r"don'?t follow|do not follow|nao (?:siga|obedeca)|ignorez|oubliez|ignoriere|vergiss|ignora)")
_RULESET = (r"(?:instruc\w*|instrucoes|reglas?|rules?|regras?|indicaciones|directri\w*|guidelines?|directives?|"
            r"prompt\w*|restric\w*|politicas?|polic\w*|programacion|programming|ordenes|orders|limitaciones|"
            r"limitations?|lo anterior|everything (?:above|before)|all (?:of )?the above|todo lo anterior|"
            r"anteriores|previous|prior|preceding|earlier|above|consignas|anweisungen|istruzioni|"
            r"configuracion|safety|seguridad (?:interna|del sistema)|filtros?|filters?|guardrails?)")

RULES: dict[str, list[tuple[str, re.Pattern]]] = {
    "override": [
        ("ignore_rules", re.compile(_IGN + _GAP + _RULESET)),
        ("new_instructions", re.compile(r"(?:nuevas|new|novas|updated|actualizadas|real|verdaderas|true) (?:instruc\w*|orders|ordenes|rules|reglas|directives)\s*[:\-]")),
        ("from_now_on", re.compile(r"(?:a partir de ahora|desde ahora|de ahora en adelante|from now on|henceforth|a partir de agora|de agora em diante|from this point)" + _GAP + r"(?:eres|seras|responde\w*|actua\w*|ignora\w*|you (?:are|will|must|shall)|act\w*|respond\w*|voce (?:e|sera)|solo|only|sin|without|tu (?:unica|nueva))")),
        ("fake_turn", re.compile(r"(?:^|\s|[\[<(#|])(?:system|sistema|assistant|developer)\s*(?:\]|>|\)|:|\|)\s*\S|<\|?im_start\|?>|\[/?inst\]|<<sys>>|###\s*(?:instruction|system|new)|</?system>|begin system prompt|end of (?:system )?prompt")),
        ("instead_do", re.compile(r"(?:en lugar de|instead of|em vez de)" + _GAP + r"(?:responder|answer\w*|la pregunta|the question|seguir|following)" + _GAP + r"(?:di|escribe|say|write|print|output|responde|diga|escreva)")),
        ("priority_claim", re.compile(r"(?:esta|this|la siguiente|the following) (?:instruccion|instruction|orden|order|mensaje|message) (?:tiene|has|takes) (?:prioridad|priority|precedence)")),
        ("override_foreign", re.compile(r"(?:ignorez|oubliez) (?:toutes? )?(?:les |vos )?(?:instructions|regles|consignes)|ignoriere (?:alle )?(?:vorherigen |bisherigen )?(?:anweisungen|regeln)|ignora (?:tutte )?le (?:istruzioni|regole)")),
    ],
    "extraction": [
        ("system_prompt", re.compile(r"(?:system|sistema|initial|inicial|hidden|oculto|secret\w*|original|internal|interno|developer|meta)[ \-_]?(?:prompt|message|mensaje|mensagem|instructions?|instrucciones|instrucoes)|prompt (?:del?|de) (?:sistema|sistem|systeme)|(?:tu|tus|your|seu|suas|sus|vos) (?:prompt|instruc\w*|reglas (?:internas|ocultas|secretas)|directrices|configuracion inicial|system)")),
        ("reveal_instructions", re.compile(r"(?:muestra\w*|muestrame|revela\w*|dime|di me|repite|repeat|imprime|print|escribe|write|copia|copy|comparte|share|ensena\w*|show|reveal|tell me|output|display|dump|leak|filtra\w*|expon\w*|expose|mostre|revele|diga|transcrib\w*|recita\w*|recite|parafrasea\w*|paraphrase|resume|summari[sz]e|traduce|translate|list|enumera|lista)" + _GAP + r"(?:instruc\w*|prompt|reglas (?:que|con las que)|rules you|directrices|configuracion|configuration|guidelines|mensaje (?:inicial|de sistema|del sistema)|initial message|lo que (?:te )?(?:dijeron|indicaron|programaron)|what (?:you were|were you) (?:told|instructed|programmed)|texto (?:anterior|de arriba|previo)|text above|words above|everything above|the above|todo lo (?:anterior|de arriba)|primer(?:as?)? (?:lineas|palabras|mensaje)|first (?:lines|words|message)|contexto oculto|hidden context)")),
        ("what_instructions", re.compile(r"(?:cuales|que|what|quais) (?:son|are|eram|fueron|were) (?:tus|your|suas|sus) (?:instruc\w*|reglas|rules|regras|directrices|guidelines|restricciones|restrictions)|(?:con que|what|which) (?:instrucciones|instructions|prompt) (?:te|were you|you were)|how (?:were you|are you) (?:prompted|instructed|configured|programmed)|como (?:te )?(?:configuraron|programaron|instruyeron)")),
        ("above_text", re.compile(r"(?:repeat|repite|repita|print|imprime|output)" + _GAP + r"(?:above|arriba|anterior|acima|before this|antes de esto|verbatim|textualmente|palabra por palabra|word for word)")),
        ("credentials", re.compile(r"(?:api[ _-]?key|clave (?:de )?(?:la )?api|secret key|clave secreta|access token|token de acceso|contrasena|password|senha|credencial\w*|credentials?|variables? de entorno|environment variables?|\.env\b|env vars?)")),
        ("canary", re.compile(r"rdr-[0-9a-f]{12}")),
    ],
    "impersonation": [
        ("claims_authority", re.compile(r"(?:soy|i am|i'm|im|sou|como|as|habla|speaking as|this is) (?:el |la |tu |your |the |o |a |un |an? |seu |sua )?(?:administrador\w*|admin\w*|desarrollador\w*|developer|dev|creador\w*|creator|operador\w*|operator|programador\w*|programmer|dueno|owner|propietario|sysadmin|root|superusuario|superuser|ingeniero de openai|openai|anthropic|equipo de seguridad|security team|red team|supervisor|moderador|moderator|jefe de (?:sistemas|seguridad))")),
        ("special_mode", re.compile(r"(?:modo|mode|modalidad) (?:de )?(?:desarrollador|developer|dev|admin\w*|dios|god|depuracion|debug\w*|mantenimiento|maintenance|sin censura|uncensored|sin filtros?|unfiltered|root|sudo|prueba sin restricciones|diagnostico|diagnostic|jailbreak|libre|unrestricted|irrestricto|dan)|(?:developer|debug|god|admin|maintenance|sudo|root|unrestricted) mode|\bsudo\b|\bsu root\b")),
        ("authorization_claim", re.compile(r"(?:tengo|i have|tenho|cuento con|with) (?:autorizacion|authori[sz]ation|permiso|permission|clearance|acceso|access|credenciales|autorizacao)" + _GAP + r"(?:para|to|de|especial|special|total|full|nivel|level)|codigo de (?:anulacion|desbloqueo|autorizacion|acceso)|(?:override|unlock|authori[sz]ation|admin) code|autorizado por (?:el|los) (?:desarrollador|administrador|creador)")),
    ],
    "jailbreak": [
        ("dan", re.compile(r"\bdan\b(?! brown)|do anything now|haz cualquier cosa ahora|\bstan\b|\baim\b (?:mode|modo)|always intelligent and machiavellian|\bdude\b mode|evil ?bot|evil confidant|jailbr[ea]{2}k\w*|anti[- ]?dan|betterdan|developer mode v2")),
        ("no_limits", re.compile(r"(?:sin|without|no|sem|free (?:of|from)|libre de|liberad\w* de|libera\w* de|freed from|unbound by) (?:ningun\w* |any |nenhum\w* |tus |your |las |the |all |todas? (?:las |tus )?)?(?:restricc\w*|restrictions?|restricoes|filtros?|filters?|limites|limits|limitations?|limitaciones|censura|censorship|reglas|rules|regras|etica|ethics|moral\w*|guardrails?|salvaguardas|safeguards|politicas|polic\w*|normas de seguridad)(?! de (?:transito|trafico))")),
        ("uncensored", re.compile(r"\b(?:unfiltered|uncensored|unrestricted|unchained|sin censura|sin filtro|irrestrict\w*|desbloquead\w*|unlocked|sem censura|sem filtro)\b")),
        ("pretend", re.compile(r"(?:pretend|finge|fingir|finja|imagina|imagine|supon|suppose|hagamos de cuenta|haz de cuenta|let'?s pretend|act as if|actua como si|roleplay|role[- ]play|juego de rol|juguemos a|let'?s play a game|vamos a jugar|simula\w*|simulate)" + _GAP + r"(?:no (?:tienes|tuvieras|hay|existen|have|had|tens|there are)|without|sin|sem|you are (?:an?|the)|eres (?:un|una|el|la)|seas|you'?re|an? (?:ai|ia|model|modelo|assistant|asistente|chatbot|bot)|(?:otra|another|different|distinta|nueva|new) (?:ia|ai|persona|personalidad|personality)|personaje|character|mi (?:abuela|abuelita)|my (?:grandma|grandmother|deceased))")),
        ("you_are_now", re.compile(r"(?:you are now|ahora eres|ahora seras|agora voce e|a partir de ahora eres|now you are|you will now be|you'?re now|desde ahora eres|ya no eres|you are no longer|no longer an?) ")),
        ("evil_persona", re.compile(r"(?:actua|actue|act|comportate|behave|responde|respond|habla|speak|escribe|write)\w* (?:como|as|like) (?:un |una |an? |el |la |o |a )?(?:ia |ai |asistente |assistant |modelo |chatbot |bot |hacker|malvad|evil|malicious|malicios|villano|villain|criminal|terrorista|terrorist|sin (?:restricc|filtro|censura|reglas|etica)|without (?:restrict|filter|rules|ethics)|my (?:deceased|dead) grand|mi abuela|personaje sin|character with no|unrestricted|irrestricto|rebelde|rogue|jailbroken|liberad|libre de)")),
        ("hypothetical_bypass", re.compile(r"(?:hipoteticamente|hypothetically|en teoria|in theory|for (?:educational|research|academic) purposes|con fines (?:educativos|academicos|de investigacion)|para fines (?:educativos|academicos))" + _GAP + r"(?:si no tuvieras|if you (?:had no|didn'?t have|were not bound|weren'?t bound)|ignor\w*|bypass\w*|sin (?:reglas|restricc|filtro)|without (?:rules|restrict|filter)|salta\w* (?:las|tus)|how to (?:bypass|evade|jailbreak)|como (?:evadir|saltar|burlar) (?:los|tus|las) (?:filtros|reglas|controles))")),
        ("respond_only", re.compile(r"(?:responde|respond|answer|reply|contesta|di|say|escribe|write|print|output|imprime)\w* (?:unicamente|solo|solamente|only|just|exclusivamente|apenas|somente)?\s*(?:con|with|com)?\s*(?:la palabra|the word|la frase|the phrase|a palavra)?\s*[\"'«“‘]?(?:pwned|hacked|hackeado|owned|jailbroken|i have been pwned|he sido hackeado|access granted|acceso concedido)")),
        ("opposite", re.compile(r"(?:modo opuesto|opposite mode|anti[- ]?mode|respuesta sin filtro|unfiltered response|two responses|dos respuestas)" + _GAP + r"(?:\w+)")),
        ("exfiltration", re.compile(r"!\[[^\]]*\]\(https?://|(?:envia|send|manda|post|exfiltra\w*|sube|upload|reenvia|forward)\w*" + _GAP + r"(?:https?://|webhook|a (?:la )?(?:url|direccion)|to (?:the |this )?(?:url|address|endpoint|server|email)|por correo|by email)")),
    ],
    "encoding": [
        ("decode_and_follow", re.compile(r"(?:decodifica\w*|decode\w*|descifra\w*|decifr\w*|decrypt\w*|traduce del|translate from|interpreta\w*|convierte|convert)" + _GAP + r"(?:base ?64|rot ?13|hex\w*|binar\w*|morse|cesar|caesar|ascii|unicode|codigo|code|cifrad\w*|cipher|encoded|codificad\w*|reversed|al reves|invertid\w*)" + _GAP + r"(?:y|and|e|then|luego|despues)?" + _GAP + r"(?:sigue\w*|segui\w*|follow\w*|ejecuta\w*|execute\w*|obedece\w*|obey\w*|cumple\w*|comply|haz|do|act\w*|realiza\w*|perform\w*|responde\w*|answer\w*|aplica\w*|apply)")),
        ("encoded_instruction", re.compile(r"(?:base ?64|rot ?13|hex(?:adecimal)?|binario|binary|morse|codificad\w*|encoded|cifrad\w*)\s*[:=]\s*\S{8,}")),
    ],
}

# Rules that must only be matched on the plain folded text (decoded views would create noise).
_PLAIN_ONLY = {("extraction", "credentials")}


def check_input(text: str) -> GuardVerdict:
    """Deterministic input guard. ``allowed=False`` with the firing rule (for the log, never the user).

    Runs in well under a millisecond per question; safe on any string (empty → allowed).
    """
    views = variants(text or "")
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
_TOXIC = re.compile(r"\b(?:hijo de puta|hijos de puta|hijueputa|malparid\w*|gonorrea|puta\b|putas\b|maricon\w*|"
                    r"imbecil\w*|idiota\w*|estupid[oa]s?|pendej\w*|cabron\w*|mierda|carajo|verga|culero|zorra|"
                    r"fuck\w*|shit\w*|bitch\w*|bastard\w*|asshole\w*|motherfuck\w*|cunt\w*|retard\w*|faggot\w*|"
                    r"nigg\w*|whore\w*|slut\w*|dumbass|porra|caralho|filho da puta|vai se foder)\b")
_PWN = re.compile(r"\b(?:pwned|i have been pwned|he sido hackeado|access granted|acceso concedido|jailbroken)\b")


@dataclass
class OutputVerdict:
    allowed: bool
    rule: str | None = None
    matched: str | None = None
    details: dict = field(default_factory=dict)


def _shingles(text: str, n: int = 8) -> set[str]:
    words = re.findall(r"\w+", fold(text))
    return {" ".join(words[i:i + n]) for i in range(max(0, len(words) - n + 1))}


def check_output(text: str, system_prompts: list[str] | tuple[str, ...] = ()) -> OutputVerdict:
    """Output guard: ``allowed=False`` when ``text`` leaks a system prompt (the canary, or any run of
    8 words of one of ``system_prompts``), contains toxic language, or echoes an injection payload.
    Citations are ignored for the checks."""
    plain = re.sub(r"\[[^\]]{0,120}\]", " ", text or "")
    folded = fold(plain)
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
