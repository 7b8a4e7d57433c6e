package main

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// kubeClient is a client with the identity of the kubeconfig (the path
// given, else $KUBECONFIG or ~/.kube/config), and the namespace a command
// reads: "" for all, the one given, else the context's.
func kubeClient(kubeconfig, namespace string, all bool) (client.Client, *rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, nil, "", err
	}
	switch {
	case all:
		namespace = ""
	case namespace == "":
		if namespace, _, err = loader.Namespace(); err != nil {
			return nil, nil, "", err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, nil, "", err
	}
	return c, cfg, namespace, nil
}
