package main

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
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
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, nil, "", err
	}
	return c, cfg, namespace, nil
}

// newScheme holds the types the plugin reads: Kubernetes' own, CRDs (the
// installed Trainer's shape), Kueue's and Trainer's.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(trainjob.AddToScheme(s))
	return s
}
