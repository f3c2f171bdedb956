package consumergroup_test

import (
	"fmt"
	"log"
	"sort"

	"github.com/zkgroup/kafka/consumergroup"
)

// AssignTopic with StrategySticky (the default, once every member offers
// it): when member-d joins, four partitions move, the three it takes and
// one the bound on the load moves between the others (8); range would
// move six. The load stays as even as range's (12 over 4: 3 each).
func ExampleAssignTopic() {
	var partitions []consumergroup.PartitionInfo
	for p := int32(0); p < 12; p++ {
		partitions = append(partitions, consumergroup.PartitionInfo{ID: p, Leader: 1})
	}
	for _, members := range [][]string{
		{"member-a", "member-b", "member-c"},
		{"member-a", "member-b", "member-c", "member-d"},
	} {
		assignment, err := consumergroup.AssignTopic(consumergroup.StrategySticky, "orders", members, partitions)
		if err != nil {
			log.Fatalln(err)
		}
		ids := make([]string, 0, len(assignment))
		for id := range assignment {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			fmt.Print(id, ":")
			for _, p := range assignment[id] {
				fmt.Print(" ", p.ID)
			}
			fmt.Println()
		}
		fmt.Println()
	}
	// Output:
	// member-a: 0 1 8 10
	// member-b: 4 6 9 11
	// member-c: 2 3 5 7
	//
	// member-a: 0 1 10
	// member-b: 4 8 9
	// member-c: 2 5 7
	// member-d: 3 6 11
}
