# Two commands for a fresh machine (Debian, or anything with Java 17, Maven
# and Go): each installs what is missing (.ci/install; `make install`
# installs everything the tests need), starts the local stack if it is not
# running, and stops, at the end, only what it started.
#
#   make demo    a consumer group losing a member to a network cut and
#                getting it back, live; DEMO_ARGS passes flags
#                (e.g. DEMO_ARGS="-duration 2m -plain")
#   make test    every test phase (.ci/tests); TEST_PACKAGES and TEST_PHASES
#                narrow it
#
# The stack's settings are integration/stack.sh's environment variables
# (ZK_PORT, KAFKA_PORT, STACK_DIR, STACK_CACHE, ENSEMBLE_ZK_PORT, ...).

SHELL := /bin/bash
export GOTOOLCHAIN ?= auto
DEMO_ARGS ?=

.PHONY: demo test install stack-up stack-down

# Built, not `go run`, so that its exit status (130 when interrupted) reaches
# with-stack.sh.
demo:
	@.ci/install
	go build -o bin/demo ./examples/demo
	integration/with-stack.sh bin/demo $(DEMO_ARGS)

test:
	@.ci/install test
	integration/with-stack.sh .ci/tests

install:
	@.ci/install test

stack-up:
	integration/stack.sh up

stack-down:
	integration/stack.sh down
