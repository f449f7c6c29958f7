"""The /chat contract (strict: ``extra='forbid'`` everywhere) and the one function that assembles it.

``assemble(result)`` is the only place a ``ChatResponse`` is built from a run, whatever path the
run took (answer, greeting, block, visualization, error); ``error_response`` builds the same
contract for failures that happen before or outside a run (invalid request, unexpected
exception). Read endpoints' response models live here too.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Estado = Literal["respondida", "sin_evidencia", "no_verificada", "incompleta", "bloqueada", "error"]
Ruta = Literal["text", "visualization", "both"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- request
class ChatRequest(Strict):
    pregunta: str = Field(min_length=1, max_length=2000, description="La pregunta, en español (o inglés/portugués).")
    conversacion_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9_\-]{1,64}$", description="Identificador de la conversación; se genera si falta."
    )


# --------------------------------------------------------------------------- response
class Politica(Strict):
    """The access rule that let a passage through (``radar_pipeline.collection.AccessScope.policy``)."""

    coleccion: str | None = Field(description="Colección del pasaje (por defecto, la carpeta superior del corpus)")
    clave: str = Field(description="Identificador público de la credencial que lo leyó (key_id, oidc:… u open)")
    regla: Literal["todas_las_colecciones", "coleccion_permitida"] = Field(
        description="todas_las_colecciones: credencial sin restricción; coleccion_permitida: la colección está "
        "entre las de la credencial"
    )


_POLITICA = Field(None, description="Qué política de acceso permitió entregar este pasaje (colección y credencial)")


class Cita(Strict):
    n: int = Field(ge=1)
    doc_id: str
    chunk_id: str
    fuente: str = Field(description="Ruta del archivo fuente dentro del corpus")
    titulo: str | None
    pagina: int | None
    politica: Politica | None = _POLITICA


class ToolCalled(Strict):
    name: str
    input_parameters: dict[str, Any]
    output: dict[str, Any]


class Evaluacion(Strict):
    input: str
    retrieval_context: list[str] = Field(description="Los pasajes entregados al redactor")
    tools_called: list[ToolCalled]


class Tokens(Strict):
    input: int = Field(ge=0)
    output: int = Field(ge=0)
    total: int = Field(ge=0)


class TokensAgente(Strict):
    input: int = Field(ge=0)
    output: int = Field(ge=0)
    total: int = Field(ge=0)
    llamadas: int = Field(ge=0)


class Cobertura(Strict):
    """One coverage requirement of the question (``router.extract_requirements``) and whether the
    passages read give evidence for it."""

    requisito: str = Field(
        description="Lo que la pregunta exige cubrir: un año, un elemento de una lista, un país o un grupo"
    )
    tipo: str = Field(
        description="year: un año de una comparación; range: un año de un periodo cerrado de la pregunta "
        "(«entre 2015 y 2020»: una fila por año, cubierto si un pasaje leído menciona el año o su documento "
        "está fechado en él); item: un elemento de una lista; country: un país; group: un grupo armado u "
        "organización; lugar: un municipio, departamento o subregión de Colombia por el que se pregunta"
    )
    cubierto: bool = Field(
        description="Si algún pasaje leído da evidencia para el requisito (un lugar: si alguna frase citada lo nombra)"
    )


class RolDegradado(Strict):
    rol: Literal["guardia_entrada", "orquestador", "visualizador", "analista", "redactor", "verificador"] = Field(
        description="Rol que no usó el modelo de lenguaje en esta ejecución y funcionó con su contraparte sin "
        "modelo: guardia_entrada → solo reglas, orquestador → enrutador por reglas, visualizador → propuesta "
        "por reglas, analista → búsqueda sin modelo, redactor → redactor extractivo, verificador → solo la "
        "verificación de citas en código"
    )
    motivo: Literal["timeout", "connection", "http", "malformed"] = Field(
        description="Tipo de fallo del proveedor del modelo: timeout (sin respuesta a tiempo), connection (no "
        "accesible), http (respondió con un error HTTP), malformed (respuesta ilegible o JSON inválido)"
    )
    por_circuito: bool = Field(
        description="true: el rol no llamó al modelo porque un rol anterior de esta ejecución ya lo encontró "
        "caído (cortacircuitos por ejecución); false: la llamada de este mismo rol falló"
    )


class Metadata(Strict):
    run_id: str
    modo: Literal["offline", "llm"]
    num_interacciones: int = Field(ge=0, description="Llamadas al modelo de lenguaje")
    llamadas_herramientas: int = Field(
        ge=0,
        description="Llamadas de herramienta de la ejecución que cuentan para el tope (8): las ejecutadas y las "
        "rechazadas (argumentos inválidos, herramienta desconocida o no disponible en su estado); no cuenta las "
        "rechazadas porque el tope ya se había alcanzado",
    )
    agentes_invocados: list[str]
    tokens: Tokens
    tokens_por_agente: dict[str, TokensAgente]
    latencia_ms: float = Field(ge=0)
    latencia_por_agente: dict[str, float] = Field(description="ms por rol (suma de sus pasos)")
    estado: Estado
    motivo_terminacion: str
    intentos_verificacion: int = Field(ge=0)
    cobertura: list[Cobertura]
    degradado: bool = Field(
        description="true cuando el proveedor del modelo de lenguaje falló en esta ejecución (modo llm) y al "
        "menos un rol respondió con su contraparte sin modelo; la respuesta lo dice en una nota final"
    )
    roles_degradados: list[RolDegradado] = Field(
        description="Los roles que funcionaron sin modelo en esta ejecución y por qué, en orden; vacía si no "
        "hubo modo degradado"
    )
    etapas_busqueda: list[Literal["lexica", "densa", "reordenamiento"]] = Field(
        default_factory=list,
        description="Etapas de búsqueda activas cuando se recuperó la evidencia (léxica BM25, densa FAISS, "
        "reordenamiento con vectores precalculados); vacía si la ejecución no buscó",
    )
    solo_lexica: bool = Field(
        default=False,
        description="true: el índice denso aún no existía y la evidencia se recuperó solo por búsqueda léxica; "
        "la respuesta lo dice en una nota final",
    )


class Componente(Strict):
    tipo: str
    titulo: str
    agregado: str
    endpoint: str
    materializado: bool | None


class Filtros(Strict):
    fenomeno: str | None
    desde: int | None
    hasta: int | None
    entidad: str | None
    lugar: str | None


class CitaCifra(Strict):
    doc_id: str
    chunk_id: str = Field(description="Pasaje que la vista contó en la celda o fila citada")


class Cifra(Strict):
    """Lo que muestra una vista del tablero, dicho en palabras, con los pasajes que contó."""

    tipo: str = Field(description="Componente (mapa_presencia, mapa_alertas, linea_tiempo…)")
    vista: str = Field(description="Vista del tablero y agregado que la respalda (armed_presence…)")
    estado: Literal["con_datos", "sin_datos", "no_materializado", "no_disponible"]
    texto: str = Field(description="Las cifras en español, con citas [doc_id:chunk_id] a la evidencia contada")
    filas: list[dict[str, Any]] = Field(description="Las filas que el texto enuncia, tal como se leyeron")
    citas: list[CitaCifra]
    no_aplicados: list[str] = Field(description="Filtros que esta vista no aplica")


class Visualizacion(Strict):
    componentes: list[Componente] = Field(min_length=1, max_length=3)
    filtros: Filtros


class CitaPremisa(Strict):
    doc_id: str = Field(description="Documento del pasaje que confirma o contradice la premisa")
    chunk_id: str = Field(description="Pasaje leído en esta ejecución que confirma o contradice la premisa")


class Premisa(Strict):
    """Lo que la pregunta da por cierto y lo que la evidencia leída dice de ello."""

    texto: str = Field(description="La premisa tal como la formula la pregunta (p. ej. «China nunca ha realizado…»)")
    estado: Literal["verdadera", "falsa", "no_verificada"] = Field(
        description="«falsa» solo con un pasaje leído que la contradice; «verdadera» solo con uno que la afirma; "
        "si no, «no_verificada»"
    )
    cita: CitaPremisa | None = Field(description="El pasaje citado; null cuando estado es «no_verificada»")
    fragmento: str | None = Field(
        description="La frase del pasaje citado, literal, que la contradice o la afirma; null sin cita"
    )


class ChatResponse(Strict):
    respuesta: str = Field(
        description="Texto con citas en línea [doc_id:chunk_id]; si la pregunta contiene una premisa, la primera "
        "frase dice qué se sabe de ella"
    )
    citas: list[Cita]
    evaluacion: Evaluacion
    metadata: Metadata
    ruta: Ruta
    visualizacion: Visualizacion | None
    conversacion_id: str
    premisa: Premisa | None = Field(
        description="La premisa de la pregunta y su verificación; null cuando la pregunta no contiene una premisa "
        "(o la ejecución terminó bloqueada o en error)"
    )
    cifras: list[Cifra] = Field(
        default_factory=list,
        description="Las cifras de cada vista enunciadas en la respuesta (componentes de la visualización y "
        "llamadas a la herramienta de agregados), con la evidencia que contaron; vacía si no hay",
    )


_STAGE_NAMES = {"lexical": "lexica", "dense": "densa", "rerank": "reordenamiento"}


def _stage_names(stages: dict[str, bool] | None) -> list[str]:
    """The contract's names of the live search stages, in pipeline order."""
    return [_STAGE_NAMES[k] for k in _STAGE_NAMES if stages and stages.get(k)]


def _lexical_only(stages: dict[str, bool] | None) -> bool:
    return bool(stages) and bool(stages.get("lexical")) and not stages.get("dense", True)


def assemble(result) -> ChatResponse:
    """The /chat contract from a ``radar_pipeline.agent.run.state.RunResult``."""
    tin = sum(u["input"] for u in result.usage.values())
    tout = sum(u["output"] for u in result.usage.values())
    return ChatResponse(
        respuesta=result.respuesta,
        citas=[Cita(**c) for c in result.citas],
        evaluacion=Evaluacion(
            input=result.pregunta,
            retrieval_context=result.retrieval_context,
            tools_called=[ToolCalled(**t) for t in result.tools_called],
        ),
        metadata=Metadata(
            run_id=result.run_id,
            modo=result.modo,
            num_interacciones=result.model_calls,
            llamadas_herramientas=result.tool_calls,
            agentes_invocados=result.agents,
            tokens=Tokens(input=tin, output=tout, total=tin + tout),
            tokens_por_agente={
                role: TokensAgente(
                    input=u["input"], output=u["output"], total=u["input"] + u["output"], llamadas=u["calls"]
                )
                for role, u in result.usage.items()
            },
            latencia_ms=result.latency_ms,
            latencia_por_agente={
                role: round(sum(s.ms for s in result.steps if s.role == role), 1) for role in result.agents
            },
            estado=result.estado,
            motivo_terminacion=result.termination_reason,
            intentos_verificacion=result.verification_attempts,
            cobertura=[Cobertura(**c) for c in result.coverage],
            degradado=bool(result.degraded),
            roles_degradados=[RolDegradado(**d) for d in result.degraded],
            etapas_busqueda=_stage_names(getattr(result, "search_stages", None)),
            solo_lexica=_lexical_only(getattr(result, "search_stages", None)),
        ),
        ruta=result.ruta,
        visualizacion=Visualizacion(**result.visualizacion) if result.visualizacion else None,
        conversacion_id=result.conversacion_id,
        premisa=Premisa.model_validate(result.premisa) if result.premisa else None,
        cifras=[Cifra.model_validate(c) for c in getattr(result, "cifras", None) or []],
    )


def error_response(
    message: str,
    *,
    pregunta: str = "",
    reason: str = "error_interno",
    modo: str = "offline",
    conversacion_id: str | None = None,
) -> ChatResponse:
    """The full contract with ``estado='error'`` for failures outside a run (bad request, crash)."""
    run_id = uuid.uuid4().hex
    return ChatResponse(
        respuesta=f"{message} Referencia: {run_id}.",
        citas=[],
        evaluacion=Evaluacion(input=pregunta, retrieval_context=[], tools_called=[]),
        metadata=Metadata(
            run_id=run_id,
            modo=modo,
            num_interacciones=0,
            llamadas_herramientas=0,
            agentes_invocados=[],
            tokens=Tokens(input=0, output=0, total=0),
            tokens_por_agente={},
            latencia_ms=0.0,
            latencia_por_agente={},
            estado="error",
            motivo_terminacion=reason,
            intentos_verificacion=0,
            cobertura=[],
            degradado=False,
            roles_degradados=[],
        ),
        ruta="text",
        visualizacion=None,
        conversacion_id=conversacion_id or uuid.uuid4().hex,
        premisa=None,
    )


# --------------------------------------------------------------------------- read endpoints
class ErrorBody(Strict):
    code: str
    message: str


class ErrorResponse(Strict):
    error: ErrorBody


class ScoreComponents(Strict):
    ranking: float
    identifier: float


class PassageHit(Strict):
    rank: int
    chunk_id: str
    doc_id: str
    title: str | None
    source_path: str
    page: int | None
    page_end: int | None
    phenomenon: str | None
    language: str | None
    text: str
    score: float
    similarity: float
    politica: Politica | None = _POLITICA
    score_components: ScoreComponents | None = Field(
        None,
        description="partes de score: ranking (fusión y segunda etapa) + identifier (prioridad de un identificador "
        "que la pregunta nombra: código de alerta, designación, programa o tratado)",
    )
    identifiers: list[str] = Field(
        default_factory=list, description="claves de los identificadores que nombra el pasaje"
    )


class DocumentHit(Strict):
    rank: int
    doc_id: str
    source_path: str
    title: str | None
    n_passages: int
    score: float


class QuestionIdentifier(Strict):
    text: str = Field(description="como la consulta lo escribe")
    kind: Literal["alert_code", "designation", "programme", "name"]
    key: str = Field(description="forma canónica: alert:010-18, designation:cosmos 1408, entity:…, name:…")


class SearchResponse(Strict):
    query: str
    documents: list[DocumentHit]
    passages: list[PassageHit]
    latency_ms: float
    identifiers: list[QuestionIdentifier] = Field(
        default_factory=list, description="identificadores que la consulta nombra exactamente (prioridad en el orden)"
    )


class Passage(Strict):
    chunk_id: str
    doc_id: str
    title: str | None
    source_path: str
    page: int | None
    page_end: int | None
    phenomenon: str | None
    language: str | None
    text: str
    politica: Politica | None = _POLITICA
    estado: Literal["vigente", "reemplazado", "retractado"] = Field(
        "vigente", description="vigente, o un pasaje cerrado que se conserva para la auditoría"
    )
    superseded_at: str | None = Field(None, description="cuándo dejó de estar vigente (ISO 8601)")
    supersede_reason: str | None = Field(
        None, description="source_changed | source_removed | extractor_changed | retracted"
    )
    superseded_by: str | None = Field(None, description="doc_id de la versión que lo reemplazó")
    replaced_by: str | None = Field(None, description="chunk_id vigente que lo reemplaza, si lo hay")


class WindowPassage(Passage):
    position: int
    is_target: bool


class WindowResponse(Strict):
    doc_id: str
    title: str | None
    source_path: str
    chunk_id: str
    position: int
    n_passages: int
    first_position: int
    passages: list[WindowPassage]
    estado: Literal["vigente", "reemplazado", "retractado"] = "vigente"
    superseded_at: str | None = None
    supersede_reason: str | None = None
    superseded_by: str | None = None
    replaced_by: str | None = None
    mentions: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="Filas de entity_mentions/place_mentions de estos pasajes, si están materializadas",
    )


class OutlineEntry(Strict):
    chunk_id: str
    page: int | None
    opening: str


class OutlineResponse(Strict):
    doc_id: str
    title: str | None
    source_path: str
    n_passages: int
    pages: list[int | None]
    entries: list[OutlineEntry]


class Publication(Strict):
    doc_id: str = Field(description="Identificador del documento (16 hex del SHA-256 del archivo)")
    title: str | None = Field(description="Título del documento")
    collection: str | None = Field(
        description="Colección de origen: código de institución de un id Codefest (F1-CSET-005 → CSET) "
        "o la carpeta superior de la ruta en el corpus"
    )
    date: str | None = Field(description="Fecha de publicación AAAA, AAAA-MM o AAAA-MM-DD; null = sin fecha")
    precision: Literal["year", "month", "day"] | None = Field(description="Precisión de la fecha")
    date_rule: str | None = Field(description="Regla que produjo la fecha (nombre de archivo o carpeta)")
    source_path: str = Field(description="Ruta del archivo en el corpus")
    phenomenon: str | None = Field(description="Fenómeno del documento")
    n_passages: int = Field(description="Pasajes del documento en el índice")


class PublicationsResponse(Strict):
    total: int = Field(description="Publicaciones que cumplen los filtros (antes de aplicar limit)")
    items: list[Publication] = Field(description="Las publicaciones, de la más reciente a la más antigua")
    date_source: str = Field(
        description="De dónde salen las fechas: publication_dates (precómputo) o ruta (tabla no materializada)"
    )
    filters: dict[str, str] = Field(description="Filtros aplicados")


class AggregateResponse(Strict):
    aggregate: str
    table: str
    title: str
    materialized: bool
    rows: list[dict[str, Any]]
    n_rows: int
    truncated: bool
    filters_applied: dict[str, Any]
    filters_ignored: list[str]
    message: str | None


class AggregateListItem(Strict):
    aggregate: str
    table: str
    title: str
    materialized: bool | None


class HealthResponse(Strict):
    status: Literal["ok", "degraded"]
    version: str
    mode: Literal["offline", "llm"]
    index: dict[str, Any]
    database: dict[str, Any]
    llm: dict[str, Any]
    auth: str = Field(
        description="Acceso: «required (api keys)», «required (api keys + oidc)» u «open (loopback only)»"
    )
    construccion: dict[str, Any] | None = Field(
        default=None,
        description="Lo que `radar up` está construyendo y cuánto falta (radar_pipeline.build_status): "
        "`en_curso`, `mensaje` (en español, con una estimación), `stages` (done/total, rate, eta_s por etapa); "
        "null cuando nada se está construyendo",
    )
