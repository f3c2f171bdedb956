# own-stack.sh: sourced by the integration/*-tests.sh scripts once they have
# set the environment of a stack of their own (ports, STACK_DIR, ZK_NODES,
# KAFKA_BROKERS, ...). It starts that stack and evaluates its settings
# (`stack.sh env`); when the script exits, the stack is stopped, its logs
# are printed if anything failed, and the script exits with $status, which
# the script sets to 1 when a test fails.
status=0
own_stack_stop() {
	integration/stack.sh down || status=1
	if ((status != 0)); then
		STACK_LOG_LINES=80 integration/stack.sh logs
	fi
	exit $status
}
trap own_stack_stop EXIT

integration/stack.sh up || {
	status=1
	exit
}
eval "$(integration/stack.sh env)"
