"""Response body of ``POST /v1/check`` (``routes_upkeep.py``): whether the catalog, the vectors and the graph
agree for the caller's tenant, and what a repair did (agent_memory/ingest/consistency.py).

Its own file: the report has a shape of its own, and ``schemas.py`` is at the house's size."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.api.schemas_upkeep import RemovedCounts


class UncataloguedOut(BaseModel):
    source_id: str
    items: int = Field(description="Its items in the vectors.")
    triples: int = Field(description="Its facts in the graph.")


class ItemsMissingOut(BaseModel):
    source_id: str
    items: int = Field(description="Items the catalog records for the source.")
    missing: int = Field(description="Of those, the items the vectors lack.")


class FactsMissingOut(BaseModel):
    source_id: str
    triples: int = Field(description="Facts the catalog records the source gave the graph (none is there).")


class IngestAgainOut(BaseModel):
    files: list[str] = Field(description="Files to ingest again (their recorded paths).")
    sources: list[str] = Field(description="Other sources marked (posted documents, turns): their writer sends them again.")


class FactsRebuiltOut(BaseModel):
    sources: int
    triples: int


class RepairOut(BaseModel):
    removed: RemovedCounts = Field(description="Sources the catalog does not know, removed from the vectors and the graph.")
    adopted: int = Field(description="Sources the catalog did not know, recorded in it (adopt=true).")
    ingest_again: IngestAgainOut = Field(description="Sources whose items are missing, marked so that the next "
                                                     "ingestion writes them again instead of calling them unchanged.")
    facts_rebuilt: FactsRebuiltOut = Field(description="Facts extracted again from the stored text.")
    refused: str | None = Field(description="Why nothing was removed (a tenant whose catalog records nothing).")
    left: list[str] = Field(description="What is left to do by hand.")
    held: list[str] = Field(default_factory=list, description="Sources a running write in another process (a "
                            "worker's job, another replica) was storing: not touched, left for the next check.")


class TenantCheckOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    ok: bool = Field(description="The three stores agree for the tenant.")
    catalog_sources: int
    vector_items: int
    graph_triples: int
    problems: list[str] = Field(description="A whole store empty of the tenant beside another that holds its data.")
    uncatalogued: list[UncataloguedOut] = Field(description="Sources the vectors or the graph hold and the catalog "
                                                            "does not know (forget cannot find them through it).")
    items_missing: list[ItemsMissingOut] = Field(description="Catalog sources whose items the vectors lack.")
    facts_missing: list[FactsMissingOut] = Field(description="Catalog sources whose facts the graph lacks.")
    repair: RepairOut | None = Field(default=None, description="With repair=true: what the repair did.")


class ToolTurnFactsOut(BaseModel):
    sources: int = Field(description="Sources holding a tool turn, read again.")
    triples_before: int = Field(description="Their facts before, as an earlier version read them.")
    triples_after: int = Field(description="Their facts now.")


class ToldOfOut(BaseModel):
    turns: int = Field(description="Stored turns read for whom they tell of.")
    told_of: int = Field(description="Those that tell of someone other than their speaker.")


class DataDirCheckOut(BaseModel):
    notes: list[str] = Field(default_factory=list, description="The graph was read by an earlier version (not a "
                             "disagreement): what to run to read it again.")
    tool_turn_facts: ToolTurnFactsOut | None = Field(default=None, description="With repair=true of every tenant: "
                                                     "the tool turns read again as this version reads them.")
    told_of: ToldOfOut | None = Field(default=None, description="With repair=true of every tenant: the turns stored "
                                      "before turns carried whom they tell of, read for it.")


class CheckOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"ok": False, "tenants": {"default": {
        "ok": False, "catalog_sources": 12, "vector_items": 30, "graph_triples": 41, "problems": [],
        "uncatalogued": [{"source_id": "weeks-1/m3", "items": 1, "triples": 2}], "items_missing": [],
        "facts_missing": []}}}]})

    ok: bool = Field(description="The stores agree (with repair=true: nothing is left to do by hand).")
    tenants: dict[str, TenantCheckOut]
    data_dir: DataDirCheckOut = Field(default_factory=DataDirCheckOut, description="What the data dir as a whole "
                                      "records, beside the tenants' stores.")
