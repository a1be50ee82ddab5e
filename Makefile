# Two entry points on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
BASE := $(VENV)/.base-stamp

.PHONY: install models demo test test-slow docs bench lint clean lock

# llama.cpp (the [server] extra, compiled by pip) is built for x86-64 with AVX2 rather than
# -march=native: on a virtualized Sapphire Rapids host its AMX kernels segfault at the first
# multi-token request (llama.cpp issue 20824; every llama-server test failed so at stop 21).
# --no-cache-dir: pip's wheel cache is keyed by the sdist alone, not CMAKE_ARGS, so a wheel once
# built -march=native would be reused silently (the CI run of stop 21 failed so)
LLAMA_CMAKE := $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON,)

# what the demo runs: the package, torch (CPU) and the llm extra (~2 minutes on a fresh machine)
$(BASE): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[llm]"
	touch $(BASE)

# everything the tests use besides: llama.cpp's server (compiled, ~15 min once), Ray, the docs, dev tools
$(STAMP): $(BASE)
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/python -m pip install -q --no-cache-dir -c constraints.txt "llama-cpp-python[server]"
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[dev,docs,llm,server,ray]"
	touch $(STAMP)

install: $(STAMP)

# the embedded default judge under models/ (idempotent: a no-op once installed)
models: $(BASE)
	$(BIN)/bayes-judge models install --quiet

demo: models
	$(BIN)/bayes-judge demo

# the docs site into site/; --strict: a broken link, a missing page or a docstring warning fails
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --quiet

test: $(STAMP) models docs
	tests/report/ensure_chromium.sh
	$(BIN)/python -m ruff check bayes_judge tests benchmarks
	$(BIN)/python -m mypy bayes_judge
	# whole files per worker, longest first (tests/conftest.py: the order, one thread per worker;
	# tests/durations.json: the files' times, rewritten by adding --store-durations)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder

test-slow: $(STAMP) models
	$(BIN)/python -m pytest -m slow

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_dawid_skene.py
	$(BIN)/python benchmarks/reproduce_winrate.py

# refresh constraints.txt to the newest releases pyproject.toml allows; run make test after it
lock:
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/python -m pip install -q --no-cache-dir --upgrade --upgrade-strategy eager torch==2.13.0 -e ".[dev,docs,llm,server,ray]"
	{ sed -n '1,3p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^-e\|^#\|^llm[-_]smollm2' \
	  | sed -E 's/^(llama_cpp_python) @ .*-([0-9.]+)\.tar\.gz.*/\1==\2/; s/^torch==([0-9.]+)\+cpu/torch==\1/'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache site
