// Command zkgroup-offsets shows and changes the committed offsets of
// consumer groups that keep them in ZooKeeper (/consumers/<group>/offsets),
// and moves them between ZooKeeper and Kafka's own group coordinator.
//
//	zkgroup-offsets show     -group G [-json]
//	zkgroup-offsets export   -group G [-topic T,...] [-o FILE]
//	zkgroup-offsets import   -group G [-clamp] [-execute [-force]] FILE
//	zkgroup-offsets reset    -group G (-topic T [-partitions 0,1] | -all-topics) [-execute [-force]] TARGET
//	zkgroup-offsets transfer -group G -to kafka|zookeeper [-kafka-group K] [-topic T,...] [-execute [-force]]
//
// TARGET is one of:
//
//	earliest          the oldest offset Kafka still has
//	latest            the high-water mark (the offset of the next message produced)
//	2024-05-01T10:00:00Z
//	                  an RFC 3339 time: the first offset whose message is at or
//	                  after it (Kafka's offset lookup by time); the high-water
//	                  mark if no message is that recent
//	shift N           the committed offset plus N (N may be negative), kept
//	                  within [earliest, latest]
//	to N              exactly N; refused outside [earliest, latest]
//
// Every offset here is the next offset to consume, as the group stores it
// in ZooKeeper and as Kafka stores a committed offset: the two are copied
// as they are, never adjusted by one.
//
// Commands that write (import, reset, transfer) print what they would do,
// partition by partition, and write nothing unless -execute is given. They
// refuse to write a ZooKeeper group while instances are registered in it
// unless -force is given. ZooKeeper offsets are written with a fenced reset
// (kazoo.Consumergroup.ResetOffsetsTo): each partition's offset is set in
// one transaction with a bump of its epoch node, so a running member that
// owns the partition loses its claim, claims again and resumes at the new
// offset instead of overwriting it with a commit it had in flight.
//
// Brokers are looked up in ZooKeeper unless -brokers is given. The exit
// status is 0 on success (a dry run included), 1 on an error and 2 on a
// usage error.
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
var subcommands = map[string]func(args []string, out io.Writer) error{
	"show":     cmdShow,
	"export":   cmdExport,
	"import":   cmdImport,
	"reset":    cmdReset,
	"transfer": cmdTransfer,
}

const usage = `usage: zkgroup-offsets COMMAND [flags] [args]

commands:
  show      committed offset, owner, high-water mark and lag per partition
  export    write a group's committed offsets as JSON
  import    set a group's offsets from an export (dry run unless -execute)
  reset     move offsets to earliest, latest, a time, shift N or to N (dry run unless -execute)
  transfer  copy offsets from ZooKeeper to Kafka or back, exactly (dry run unless -execute)

Run "zkgroup-offsets COMMAND -h" for a command's flags.
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
	if err := cmd(args[1:], out); err != nil {
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
