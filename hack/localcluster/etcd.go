package localcluster

import (
	"context"
	"fmt"
)

// etcd is the API server's store.
type etcd struct{}

func (etcd) name() string      { return "etcd" }
func (etcd) runs(Options) bool { return true }
func (etcd) ports() []string   { return []string{"etcd", "etcd-peer"} }
func (etcd) start(_ context.Context, b *bringUp) error {
	url := fmt.Sprintf("http://127.0.0.1:%d", b.ports["etcd"])
	peer := fmt.Sprintf("http://127.0.0.1:%d", b.ports["etcd-peer"])
	return b.launch("etcd", nil,
		"--data-dir="+b.path("etcd"), "--name=default",
		"--listen-client-urls="+url, "--advertise-client-urls="+url,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=default="+peer,
		// A playground on one machine: durability buys nothing here.
		"--unsafe-no-fsync=true",
	)
}
