package kazoo

import (
	"strconv"
)

// Every znode path this package uses is built here, relative to the chroot.
// The layout is Kafka's (brokers, topics) and its original high-level
// consumer's (consumers), plus the epochs subtree this library adds.

func (kz *Kazoo) path(rel string) string { return kz.conf.Chroot + rel }

func (kz *Kazoo) brokersIDsPath() string          { return kz.path("/brokers/ids") }
func (kz *Kazoo) brokerPath(id string) string     { return kz.path("/brokers/ids/" + id) }
func (kz *Kazoo) controllerPath() string          { return kz.path("/controller") }
func (kz *Kazoo) topicsPath() string              { return kz.path("/brokers/topics") }
func (kz *Kazoo) topicPath(t string) string       { return kz.path("/brokers/topics/" + t) }
func (kz *Kazoo) topicConfigPath(t string) string { return kz.path("/config/topics/" + t) }
func (kz *Kazoo) deleteTopicPath(t string) string { return kz.path("/admin/delete_topics/" + t) }

func (kz *Kazoo) partitionStatePath(t string, p int32) string {
	return kz.path("/brokers/topics/" + t + "/partitions/" + itoa(p) + "/state")
}

func (kz *Kazoo) consumersPath() string     { return kz.path("/consumers") }
func (kz *Kazoo) groupPath(g string) string { return kz.path("/consumers/" + g) }
func (kz *Kazoo) idsPath(g string) string   { return kz.path("/consumers/" + g + "/ids") }
func (kz *Kazoo) instancePath(g, id string) string {
	return kz.path("/consumers/" + g + "/ids/" + id)
}
func (kz *Kazoo) ownersPath(g string) string { return kz.path("/consumers/" + g + "/owners") }
func (kz *Kazoo) ownerTopicPath(g, t string) string {
	return kz.path("/consumers/" + g + "/owners/" + t)
}
func (kz *Kazoo) ownerPath(g, t string, p int32) string {
	return kz.path("/consumers/" + g + "/owners/" + t + "/" + itoa(p))
}
func (kz *Kazoo) offsetsPath(g string) string { return kz.path("/consumers/" + g + "/offsets") }
func (kz *Kazoo) offsetTopicPath(g, t string) string {
	return kz.path("/consumers/" + g + "/offsets/" + t)
}
func (kz *Kazoo) offsetPath(g, t string, p int32) string {
	return kz.path("/consumers/" + g + "/offsets/" + t + "/" + itoa(p))
}
func (kz *Kazoo) epochPath(g, t string, p int32) string {
	return kz.path("/consumers/" + g + "/epochs/" + t + "/" + itoa(p))
}

func itoa(p int32) string { return strconv.FormatInt(int64(p), 10) }

func (kz *Kazoo) topicConfigsPath() string { return kz.path("/config/topics") }
func (kz *Kazoo) deleteTopicsPath() string { return kz.path("/admin/delete_topics") }

func (kz *Kazoo) epochsPath(g string) string { return kz.path("/consumers/" + g + "/epochs") }
func (kz *Kazoo) epochTopicPath(g, t string) string {
	return kz.path("/consumers/" + g + "/epochs/" + t)
}

func (kz *Kazoo) staticMembersPath(g string) string { return kz.path("/consumers/" + g + "/static") }
func (kz *Kazoo) staticMemberPath(g, id string) string {
	return kz.path("/consumers/" + g + "/static/" + id)
}
