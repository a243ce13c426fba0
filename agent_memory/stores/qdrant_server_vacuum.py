"""Deleted points out of a Qdrant server collection's keyword weighting, by the server's vacuum optimizer.

The IDF modifier of the ``sparse`` vector takes a term's document frequency from the posting lists of the
segments' sparse indexes and the document count from the vectors they index. A delete only marks a point
deleted: both counts keep it until its segment is rebuilt (found against a real Qdrant 1.16.3: 3 points
left of 303 scored 7.24 where a collection that never held the 300 scored 0.43; restarting the server did
not clear 50 deleted of 53). The server rebuilds a segment without its deleted points when its vacuum
optimizer picks it: by default once more than 20% of a segment of 1000+ points is deleted, so in a smaller
segment a forget changed keyword scores for good.

So the driver creates a collection whose vacuum threshold is a small share of deleted points: the server
then vacuums in its background, as Qdrant Edge's shard is reopened; gc waits for it (:func:`wait_for_vacuum`).
A server vacuums no segment of fewer than ``VACUUM_FLOOR`` points, deleted ones included (its least
``vacuum_min_vector_number``): there deleted points keep counting until the segment grows past it.

Only on a server of ``LOW_THRESHOLD_SINCE`` or later: before it, a point deleted while a vacuum merges its segment
could come back in the merged segment (upstream qdrant/qdrant#9052, fixed in 1.18.1), and a low threshold makes
the server vacuum after nearly every forget. An older server keeps its own settings (a warning says so, once per
process): keyword scores count forgotten items until its default vacuum, but nothing forgotten is risked.

The driver never changes the vacuum settings of a collection that exists. A collection update stops the
optimizations running on it, and on Qdrant 1.16.3 a vacuum stopped that way brought deleted points back:
forgotten items were found again (measured: 24 to 300 of 300 after a gc that lowered the threshold while
the server vacuumed; upstream qdrant/qdrant#9052, in Qdrant 1.18.1). docs/deployment.md says when an
operator can change them safely.
"""

from __future__ import annotations

import logging
import time

from qdrant_client import QdrantClient, models

from agent_memory.core.errors import StoreError
from agent_memory.stores.qdrant_common import SPARSE

log = logging.getLogger(__name__)

# The least vacuum_min_vector_number a server accepts (99: "must be 100 or larger").
VACUUM_FLOOR = 100
# The first Qdrant release whose vacuum never brings a deleted point back (qdrant/qdrant#9052).
LOW_THRESHOLD_SINCE = (1, 18, 1)
_warned: set[str] = set()
# How often wait_for_vacuum asks whether the server's optimizers are done.
_POLL_S = 0.2


def vacuum_config(share: float) -> models.OptimizersConfigDiff:
    """Vacuum a segment once more than ``share`` of its points are deleted, from the server's floor up."""
    return models.OptimizersConfigDiff(deleted_threshold=share, vacuum_min_vector_number=VACUUM_FLOOR)


def server_version(client: QdrantClient) -> tuple[int, ...] | None:
    """The server's release as numbers ("1.16.3" -> (1, 16, 3)); None where it does not say."""
    try:
        version = client.info().version
        return tuple(int(part) for part in version.split("-")[0].split("."))
    except Exception as exc:  # noqa: BLE001 - an unknown version is treated as an old one
        log.debug("no version from the Qdrant server: %s", exc)
        return None


def low_threshold_is_safe(client: QdrantClient, where: str) -> bool:
    """Whether the server at ``where`` may be given a low vacuum threshold (:data:`LOW_THRESHOLD_SINCE`);
    else a warning, once per server and process, says what that costs and how to lift it."""
    version = server_version(client)
    if version is not None and version >= LOW_THRESHOLD_SINCE:
        return True
    if where not in _warned:
        _warned.add(where)
        shown = ".".join(map(str, version)) if version else "of unknown version"
        log.warning("Qdrant server at %s is %s: new collections keep the server's own vacuum settings (a deleted "
                    "point is dropped once 20%% of its segment is deleted), so keyword scores count forgotten items "
                    "until then. A lower threshold is set from Qdrant %s on, where a vacuum can no longer bring a "
                    "deleted point back (qdrant/qdrant#9052)", where, shown, ".".join(map(str, LOW_THRESHOLD_SINCE)))
    return False


def deleted_counted(client: QdrantClient, collection: str) -> int | None:
    """How many deleted points the collection's keyword weighting still counts, by the server's telemetry
    (a deleted point's vectors stay in its segment until a vacuum); None where the telemetry does not say
    (another version's layout, a key without access to it, a cluster's remote shards are not in it)."""
    try:
        telemetry = client.http.client.request(type_=dict, method="GET", url="/telemetry",
                                               params={"details_level": 3})
        for entry in telemetry["result"]["collections"]["collections"]:
            if entry.get("id") == collection:
                shards = [shard["local"] for shard in entry["shards"] if shard.get("local")]
                return sum(max(0, shard["num_vectors_by_name"].get(SPARSE, 0) - shard["num_points"])
                           for shard in shards)
    except Exception as exc:  # noqa: BLE001 - the count only spares a vacuum: without it, vacuum anyway
        log.debug("no deleted-point count from the telemetry of %s: %s", collection, exc)
    return None


def wait_for_vacuum(client: QdrantClient, collection: str, wait_s: float) -> bool:
    """Wait up to ``wait_s`` for the server's optimizers to finish what they have to do on the collection
    (its status green: no segment past its vacuum threshold left). True when they did; else they go on in
    the server, and keyword scores count the deleted points until they are done."""
    deadline = time.monotonic() + wait_s
    while True:
        info = client.get_collection(collection)
        if info.status == models.CollectionStatus.RED:
            raise StoreError(f"Qdrant collection {collection!r}: the server's optimizers failed: "
                             f"{info.optimizer_status}")
        if info.status == models.CollectionStatus.GREEN:
            return True
        if time.monotonic() >= deadline:
            log.warning("Qdrant collection %r is still being optimized after %.0f s: the server goes on; "
                        "keyword scores count deleted points until it is done", collection, wait_s)
            return False
        time.sleep(_POLL_S)
