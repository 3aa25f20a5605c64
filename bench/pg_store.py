"""The PostgreSQL quad store against the embedded one on the same generated quads (bench/store.py's shape).

    python scripts/services.py start --only postgres && eval "$(python scripts/services.py env)"
    .venv/bin/python bench/pg_store.py [--facts 60000] [--lookups 500]

Load rate (batches of 5,000 quads, one transaction each), lookups (by subject, by object, the named
operations a question makes), export (byte-identical check), bytes a quad on disk, and what 128-bit
(uuid) ids would cost in table and index size instead of the 64-bit ones.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report, time_each  # noqa: E402
from store import generate  # noqa: E402

from provgraph.rdf.vocab import GRAPH_SOURCE, TG  # noqa: E402
from provgraph.store.oxigraph import OxigraphStore  # noqa: E402
from provgraph.store.postgres import PostgresStore, drop_pg_collection  # noqa: E402

_SIZE = ("SELECT pg_total_relation_size('{s}.quads'), pg_total_relation_size('{s}.terms'), "
         "pg_relation_size('{s}.quads'), (SELECT count(*) FROM {s}.terms)")
_UUID_COPY = """CREATE TABLE {s}.q128 AS SELECT md5(g::text)::uuid AS g, md5(s::text)::uuid AS s, md5(p::text)::uuid AS p,
  md5(o::text)::uuid AS o FROM {s}.quads;
CREATE UNIQUE INDEX ON {s}.q128 (s, p, o, g); CREATE INDEX ON {s}.q128 (p, o, s); CREATE INDEX ON {s}.q128 (o, s, g);
CREATE INDEX ON {s}.q128 (g, s, p)"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=60_000, help="facts (~3.4 quads each)")
    ap.add_argument("--lookups", type=int, default=500)
    ap.add_argument("--url", default=os.environ.get("PROVGRAPH_STORE_URL"))
    args = ap.parse_args()
    if not args.url:
        sys.exit("set PROVGRAPH_STORE_URL (python scripts/services.py start --only postgres) or pass --url")
    rng = random.Random(7)
    quads, facts, subgraphs = generate(args.facts, rng)
    name = f"bench-{uuid.uuid4().hex[:8]}"
    pg = PostgresStore(args.url, "bench", name)
    try:
        t0 = time.perf_counter()
        for i in range(0, len(quads), 5000):
            pg.add(quads[i:i + 5000])
        dt = time.perf_counter() - t0
        report("pg.load", quads=len(quads), seconds=round(dt, 1), quads_per_s=round(len(quads) / dt))
        with tempfile.TemporaryDirectory() as tmp:
            ox = OxigraphStore(Path(tmp) / "store", name="bench")
            t0 = time.perf_counter()
            for i in range(0, len(quads), 5000):
                ox.add(quads[i:i + 5000])
            report("embedded.load", quads=len(quads), quads_per_s=round(len(quads) / (time.perf_counter() - t0)))
            for label, store in (("pg", pg), ("embedded", ox)):
                sample = rng.sample(facts, args.lookups)
                sgs = rng.sample(subgraphs, min(args.lookups, len(subgraphs)))
                report(f"{label}.match_by_subject", **percentiles(time_each(lambda sg: list(store.match(sg)), sgs)))
                report(f"{label}.match_by_object_fact", **percentiles(
                    time_each(lambda f: list(store.match(None, TG.contains, f, g=GRAPH_SOURCE)), sample)))
                batches = [sample[i:i + 20] for i in range(0, len(sample), 20)]
                report(f"{label}.edge_sources_20", **percentiles(time_each(lambda b: store.edge_sources(b), batches)))
                chunk_batches = [[next(store.match(sg, None, None)).s for sg in sgs[i:i + 10]] for i in range(0, 200, 10)]
                report(f"{label}.facts_of_subgraphs_10", **percentiles(
                    time_each(lambda b: store.facts_of_subgraphs(b), chunk_batches, warmup=2)))
                terms = [f.s for f in sample]
                report(f"{label}.labels_500", **percentiles(time_each(lambda t: store.labels(t), [terms] * 20, warmup=2)))
            t0 = time.perf_counter()
            exported = pg.export_bytes()
            report("pg.export", seconds=round(time.perf_counter() - t0, 1), identical=exported == ox.export_bytes())
            ox.close()
        quad_bytes, term_bytes, heap, n_terms = pg._fetch(_SIZE)[0]
        report("pg.disk", quads=len(quads), terms=n_terms, bytes_per_quad=round((quad_bytes + term_bytes) / len(quads)),
               quad_table_and_indexes_mb=round(quad_bytes / 2**20, 1), terms_mb=round(term_bytes / 2**20, 1))
        conn = pg._conn()
        conn.execute(_UUID_COPY.format(s=pg.schema))
        size128 = conn.execute(f"SELECT pg_total_relation_size('{pg.schema}.q128')").fetchone()[0]
        report("pg.ids_128_bit", quad_table_and_indexes_mb=round(size128 / 2**20, 1),
               versus_64_bit=round(size128 / quad_bytes, 2))
    finally:
        pg.close()
        drop_pg_collection(args.url, "bench", name)


if __name__ == "__main__":
    main()
