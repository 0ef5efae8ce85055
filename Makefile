# Everything a person does here is a make target. Nothing needs configuring: without DATABASE_URL
# and REDIS_URL the embedded PostgreSQL and Redis under var/ are used (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME := $(BIN)/python -m casino.runtime

.PHONY: help run serve demo test faults bench lint format messages stop clean api-examples screenshots

help:
	@echo "make run    start everything with demo data (admin at http://127.0.0.1:8000/admin/)"
	@echo "make serve  start everything, no demo data"
	@echo "make demo   the same, headless: record the demo day, run the worker once, exit"
	@echo "make test   the whole test suite (real PostgreSQL, Redis and Celery worker)"
	@echo "make faults the fault suite alone (also part of make test)"
	@echo "make bench  the benchmarks (BENCH=\"broker api\": only those)"
	@echo "make lint   ruff and mypy"
	@echo "make messages  refresh locale/en (new messages to translate) and compile it"
	@echo "make api-examples  the schema's examples, from a séance played over the API"
	@echo "make screenshots   docs/screenshots/, taken by the browser tests"
	@echo "make stop   stop embedded servers left running by manage.py"

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

run: $(STAMP)
	$(RUNTIME) run

serve: $(STAMP)
	$(RUNTIME) serve

demo: $(STAMP)
	$(RUNTIME) demo

test: $(STAMP)
	$(RUNTIME) exec -- $(BIN)/python -m pytest $(PYTEST_ARGS)

# The fault suite starts a PostgreSQL and a Redis of its own: it needs no configured server.
faults: $(STAMP)
	$(RUNTIME) exec -- $(BIN)/python -m pytest tests/reliability $(PYTEST_ARGS)

bench: $(STAMP)
	$(RUNTIME) exec -- $(BIN)/python -m tests.bench $(BENCH)

# Every operation's example in the schema, recorded from the tour of tests/api/tour.py.
api-examples: $(STAMP)
	CASINO_RECORD_EXAMPLES=1 $(RUNTIME) exec -- $(BIN)/python -m pytest -q tests/api/test_schema.py -k calls_every

# The pictures in docs/screenshots/, taken by the browser tests.
screenshots: $(STAMP)
	CASINO_RECORD_SCREENSHOTS=1 $(RUNTIME) exec -- $(BIN)/python -m pytest -q tests/browser

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The English catalog (README, "Words"): every message marked in the code, then compiled. No
# settings needed (nor the embedded servers): django-admin finds locale/ in this directory.
MAKEMESSAGES_ARGS := -l en --add-location=file '--ignore=var/*' '--ignore=tests/*' '--ignore=docker/*'

messages: $(STAMP)
	env -u DJANGO_SETTINGS_MODULE $(BIN)/django-admin makemessages $(MAKEMESSAGES_ARGS)
	env -u DJANGO_SETTINGS_MODULE $(BIN)/django-admin compilemessages -l en --ignore '.venv/*' --ignore 'var/*'

stop: $(STAMP)
	$(RUNTIME) stop

clean: stop
	rm -rf var
