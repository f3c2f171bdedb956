package kazoo

import (
	"slices"
	"strings"
	"testing"
)

func TestParseConnectionString(t *testing.T) {
	cases := []struct {
		in     string
		nodes  []string
		chroot string
	}{
		{"zk1:2181", []string{"zk1:2181"}, ""},
		{"zk1:2181,zk2:2181,zk3:2181", []string{"zk1:2181", "zk2:2181", "zk3:2181"}, ""},
		{"zk1:2181,zk2:2181/kafka", []string{"zk1:2181", "zk2:2181"}, "/kafka"},
		{"zk1:2181/kafka/prod", []string{"zk1:2181"}, "/kafka/prod"},
		{"zk1:2181/kafka/", []string{"zk1:2181"}, "/kafka"},
		{"zk1:2181/", []string{"zk1:2181"}, ""},
		{" zk1:2181 , ,zk2:2181", []string{"zk1:2181", "zk2:2181"}, ""},
		{"", nil, ""},
	}
	for _, c := range cases {
		nodes, chroot := ParseConnectionString(c.in)
		if !slices.Equal(nodes, c.nodes) || chroot != c.chroot {
			t.Errorf("ParseConnectionString(%q) = %q, %q; want %q, %q", c.in, nodes, chroot, c.nodes, c.chroot)
		}
	}
	if got := BuildConnectionString([]string{"a:1", "b:2"}); got != "a:1,b:2" {
		t.Errorf("BuildConnectionString = %q", got)
	}
	if got := BuildConnectionStringWithChroot([]string{"a:1", "b:2"}, "/k"); got != "a:1,b:2/k" {
		t.Errorf("BuildConnectionStringWithChroot = %q", got)
	}
}

func TestConfigValidateNamesField(t *testing.T) {
	cases := []struct {
		mutate func(*Config)
		field  string
	}{
		{func(c *Config) { c.Timeout = 0 }, "Config.Timeout"},
		{func(c *Config) { c.ConnectTimeout = -1 }, "Config.ConnectTimeout"},
		{func(c *Config) { c.Chroot = "kafka" }, "Config.Chroot"},
		{func(c *Config) { c.Chroot = "/kafka/" }, "Config.Chroot"},
		{func(c *Config) { c.Chroot = "/a//b" }, "Config.Chroot"},
		{func(c *Config) { c.Auth = []Auth{{}} }, "Config.Auth[0].Scheme"},
		{func(c *Config) { c.ACL = []ACL{{Scheme: "world", ID: "anyone"}} }, "Config.ACL[0]"},
	}
	if err := NewConfig().Validate(); err != nil {
		t.Fatalf("NewConfig().Validate() = %v", err)
	}
	for _, c := range cases {
		conf := NewConfig()
		c.mutate(conf)
		err := conf.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Validate() = %v; want an error naming %s", err, c.field)
		}
	}
}
