# Convenience targets; each is one command you can also run by hand.
.PHONY: build test accuracy bench demo

build:
	go build -o ratecheck .

# The whole test suite (installs nginx when missing), as CI runs it.
test:
	./scripts/test

# The probe accuracy harness: every family × several parameter sets,
# printing a confusion matrix and parameter errors (several minutes).
accuracy:
	go test -tags accuracy -run Accuracy -v -timeout 30m ./probe/selftest/

# ratecheck against vegeta on a local sink (see bench/README.md).
bench:
	./bench/run.sh

demo: build
	./ratecheck demo
