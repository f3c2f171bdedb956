// Command zkgroup-offsets shows and changes the committed offsets of
// consumer groups coordinated in ZooKeeper, wherever they keep them
// (-storage zookeeper, kafka or dual, as the group's Offsets.Storage), and
// moves them between ZooKeeper and Kafka's own group coordinator. The
// usage text (usage below, "zkgroup-offsets -h") lists the commands, the
// TARGET forms and the exit codes; docs/offsets-command.md walks through
// them.
//
// Every offset here is the next offset to consume, as the group stores it
// in ZooKeeper and as Kafka stores a committed offset: the two are copied
// as they are, never adjusted by one.
//
// Commands that write (import, reset, delete, transfer) print what they
// would do and write nothing unless -execute is given. ZooKeeper offsets
// are written with a fenced reset (kazoo.Consumergroup.ResetOffsetsTo, or
// ResetOffsets for delete): each partition's offset is set in one
// transaction with a bump of its epoch node, so a running member that owns
// the partition loses its claim and resumes at the new offset instead of
// overwriting it with a commit it had in flight. Kafka knows no claims, so
// writing Kafka's offsets (-storage kafka or dual) and delete are refused
// while members are registered, -force or not.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// subcommands maps a subcommand's name to its implementation. Each parses
// its own flags from args and writes its results to out.
var subcommands = map[string]func(args []string, out, errOut io.Writer) error{
	"show":     cmdShow,
	"list":     cmdList,
	"delete":   cmdDelete,
	"export":   cmdExport,
	"import":   cmdImport,
	"reset":    cmdReset,
	"transfer": cmdTransfer,
}

const usage = `usage: zkgroup-offsets COMMAND [flags] [args]

commands:
  list      the consumer groups in ZooKeeper, their instances and stored offsets
  show      committed offset, owner, high-water mark and lag per partition
  export    write a group's committed offsets as JSON
  import    set a group's offsets from an export (dry run unless -execute)
  reset     move offsets to a TARGET or -by-duration D (dry run unless -execute)
  delete    delete a group's offsets, fenced; refused while members are registered (dry run unless -execute)
  transfer  copy offsets from ZooKeeper to Kafka or back, exactly (dry run unless -execute)

-storage zookeeper|kafka|dual (show, export, import, reset, delete) names
where the group keeps its offsets, as its Offsets.Storage (default
zookeeper). A warning names each partition where the other store is ahead;
under dual a member starts at the higher of the two, so import and reset
set both.

` + targetForms + `
-json prints the plan of import, reset and delete as one JSON document
(notes go to standard error).

Security (every command): -zk-tls-ca/-zk-tls-cert/-zk-tls-key,
-zk-user/-zk-password-file (ZooKeeper digest), -listener, -kafka-tls,
-kafka-tls-ca, -sasl-user/-sasl-password-file/-sasl-mechanism.

exit status:
  0  success, a dry run included (and -h)
  1  an error: unreachable cluster, missing group or topic, a refused write
  2  a usage error

Run "zkgroup-offsets COMMAND -h" for a command's flags.
`

// targetForms lists reset's TARGET forms, for both usage texts.
const targetForms = `
reset TARGET is one of:
  earliest              the oldest offset Kafka still has
  latest                the high-water mark (the offset of the next message produced)
  2024-05-01T10:00:00Z  an RFC 3339 time: the first offset whose message is at or
                        after it (Kafka's offset lookup by time); the high-water
                        mark if no message is that recent
  shift N               the committed offset plus N (N may be negative), kept
                        within [earliest, latest]
  to N                  exactly N; refused outside [earliest, latest]
or, instead of a TARGET, -by-duration D (1h, 90m): the time D before now.
`

// run is the program without the process around it: it returns the exit
// status.
func run(args []string, out, errOut io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		fmt.Fprint(errOut, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(errOut, "zkgroup-offsets: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err := cmd(args[1:], out, errOut); err != nil {
		if ue, ok := err.(usageError); ok {
			if ue.msg != "" {
				fmt.Fprintf(errOut, "zkgroup-offsets %s: %s\n", args[0], ue.msg)
			}
			if ue.usage != nil {
				ue.usage(errOut)
			}
			if ue.help {
				return 0
			}
			return 2
		}
		fmt.Fprintf(errOut, "zkgroup-offsets %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
