# A thin Makefile over npm scripts (docs/ARCHITECTURE.md, Conventions). `make demo` and `make test`
# are the two commands a newcomer needs; both install what they need first.
.PHONY: install build test lint format demo bench servers clean chaos certs screenshots fuzz

NODE_MODULES_STAMP := node_modules/.install-stamp

install: $(NODE_MODULES_STAMP)

$(NODE_MODULES_STAMP): package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

# tsc → dist/, then the command line bundled (scripts/bundle.ts: dist/bin/hivenode.js and its chunks)
build: install
	npx tsc -p tsconfig.json
	node --import tsx scripts/bundle.ts

# eslint (the layers and conventions of docs/ARCHITECTURE.md), then knip: no export that nothing imports
# (knip.json: the entry points are the command line, the package's index, and every spec, bench and script)
lint: install
	npx prettier --check '**/*.ts' --log-level warn
	npx eslint .
	npx knip --no-progress

format: install
	npx prettier --write '**/*.ts' --log-level warn

test: install
	bash scripts/test.sh

# `make demo ONCE=1` shows the calls and stops instead of keeping the node running; FRESH=1 starts clean.
demo: build
	node dist/bin/hivenode.js demo$(if $(ONCE), --once)$(if $(FRESH), --fresh)

bench: build
	bash scripts/bench.sh

# docs/console/*.png, the console pictures of the README (needs chromium: apt-get install chromium)
screenshots: install
	bash scripts/ensure-packages.sh chromium:chromium
	node --import tsx scripts/console-screenshots.ts

chaos: install
	bash scripts/chaos.sh

# the lean wire's HTTP/1.x parser against llhttp, 10^6 cases (`make fuzz CASES=… SEED=…`)
fuzz: install
	npx tsx scripts/fuzz.ts --cases $(or $(CASES),1000000) --seed $(or $(SEED),1)

# `make certs DIR=…` writes a local CA and certificates for the TLS examples (default ./certs)
certs:
	bash scripts/certs.sh $(DIR)

servers:
	bash scripts/servers.sh squid:squid

clean:
	rm -rf dist test-artifacts
