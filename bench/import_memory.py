"""Peak memory of an N-Quads import: parsed whole into a list (how import_data worked before issue 28),
streamed through the nesting check into one transaction (how it worked next), checked and then written
in transactions of 10,000 quads (how it works now), checked and then bulk-loaded (how restore loads).

Each way runs in a fresh process on the same generated file (quads shaped like provgraph's: facts,
triple terms in the source graph, text literals); the figure is the process's peak RSS less its RSS
before the import, over the file's size. Usage: python bench/import_memory.py [QUADS]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys
from pathlib import Path
import pyoxigraph as ox
from provgraph.store.oxigraph import OxigraphStore, parse_rdf
way, data, folder = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
store = OxigraphStore(folder, name="bench")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if way == "whole":
    store._store.extend(list(ox.parse(data.read_bytes(), format=ox.RdfFormat.N_QUADS)))
elif way == "streamed":
    store._store.extend(parse_rdf("bench", data, "nquads"))
elif way == "batched":
    store.import_data(data, "nquads")
else:
    store.import_data(data, "nquads", bulk=True)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, len(store))
store.close()
"""


def quads(n: int) -> bytes:
    lines = []
    for i in range(n // 3):
        fact = f"<urn:e:{i}> <urn:p:rel{i % 50}> <urn:e:{i + 1}>"
        lines.append(f"{fact} .")
        lines.append(f'<urn:chunk:{i // 20}> <urn:p:text> "Sentence {i} says that e{i} relates to e{i + 1}." .')
        lines.append(f"<urn:sg:{i}> <urn:p:contains> <<( {fact} )>> <urn:graph:source> .")
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.nq"
        data.write_bytes(quads(n))
        size = data.stat().st_size
        print(f"{n} quads, {size / 2**20:.1f} MiB of N-Quads")
        for way in ("whole", "streamed", "batched", "checked+bulk"):
            out = subprocess.run([sys.executable, "-c", CHILD, way, str(data), str(Path(tmp) / way)],
                                 capture_output=True, text=True, check=True).stdout.split()
            grown, count = int(out[0]) * 1024, int(out[1])
            print(f"{way:12} peak +{grown / 2**20:7.1f} MiB = {grown / size:5.1f}x the input ({count} quads)")


if __name__ == "__main__":
    main()
