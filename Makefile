# provgraph — `make test` installs everything into .venv and runs the whole suite;
# `make demo` installs and runs the product on the sample corpus, offline.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: test demo lint install bench eval eval-multihop clean screenshots

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[test,scale]'
	touch $(STAMP)

install: $(STAMP)

# Test data on a tmpfs when one has room (the stores' fsyncs otherwise dominate), kept only for failed
# tests; each test file on one worker, in collection order (the slow browser and fault files start first,
# module fixtures are built once).
TEST_TMP := $(shell df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 > 2097152 { print "/dev/shm" }')

test: $(STAMP)
	$(if $(TEST_TMP),TMPDIR=$(TEST_TMP) )$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder \
		-o tmp_path_retention_policy=failed

demo: $(STAMP)
	$(PY) scripts/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy

screenshots: $(STAMP)  # the browser tests, writing their page screenshots to docs/screenshots
	VIEWER_SCREENSHOTS=docs/screenshots $(PY) -m pytest tests/browser

bench: $(STAMP)
	for b in bench/startup.py bench/store.py bench/ingest_decode.py bench/models.py bench/extract.py bench/graph_rag.py bench/agent.py bench/serve.py; do echo "== $$b"; $(PY) $$b || exit 1; done

eval: $(STAMP)
	$(PY) bench/quality.py

# public multi-hop subsets (bench/eval/multihop/SOURCES.md; data made by bench/multihop_data.py); ARGS=... passes options
eval-multihop: $(STAMP)
	$(PY) bench/multihop.py $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
