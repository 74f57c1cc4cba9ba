# Convenience targets; each one is a script in scripts/ that installs what it needs.
.PHONY: demo test bench build
demo:
	scripts/demo.sh
test:
	scripts/test.sh
bench:
	scripts/bench.sh
build:
	swift build
