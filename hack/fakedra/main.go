// Command fakedra is the local cluster's DRA driver gpu.example.com, for
// make cluster-up DRA=true: it publishes, for every kwok node (annotation
// kwok.x-k8s.io/node: fake) with nvidia.com/gpu capacity N, a
// ResourceSlice of N devices gpu-0…gpu-N-1 with the attributes productName
// and index and a memory capacity, owned by the node (deleted with it).
// Nothing is prepared on nodes: kwok runs no containers. The scheduler's
// DynamicResources plugin allocates from these slices, Kueue counts claims
// of the DeviceClass gpu.example.com against its quota resource
// example.com/gpu.
//
//	fakedra -kubeconfig FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// Driver is the driver's name, and the DeviceClass's.
const Driver = "gpu.example.com"

// ProductName is every fake device's productName attribute.
const ProductName = "Example GPU 80GB"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the cluster's kubeconfig")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cs); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}

// run keeps every GPU node's slice until ctx ends.
func run(ctx context.Context, cs kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(cs, 10*time.Minute)
	nodes := factory.Core().V1().Nodes()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	enqueue := func(o any) {
		if n, ok := o.(*corev1.Node); ok {
			queue.Add(n.Name)
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	log.Printf("publishing %s devices for the kwok GPU nodes", Driver)
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		name, quit := queue.Get()
		if quit {
			return nil
		}
		node, err := nodes.Lister().Get(name)
		if err == nil {
			err = publish(ctx, cs, node)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			log.Printf("node %s: %v", name, err)
			queue.AddRateLimited(name)
		} else {
			queue.Forget(name)
		}
		queue.Done(name)
	}
}

// publish makes node's slice what SliceFor says, when it is a GPU node.
func publish(ctx context.Context, cs kubernetes.Interface, node *corev1.Node) error {
	want := SliceFor(node)
	if want == nil {
		return nil
	}
	slices := cs.ResourceV1().ResourceSlices()
	got, err := slices.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = slices.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil || equality.Semantic.DeepEqual(got.Spec.Devices, want.Spec.Devices) {
		return err
	}
	got.Spec.Devices = want.Spec.Devices
	got.Spec.Pool.Generation++
	_, err = slices.Update(ctx, got, metav1.UpdateOptions{})
	return err
}

// SliceFor is the ResourceSlice of a kwok node with nvidia.com/gpu
// capacity: one device per GPU; nil for any other node.
func SliceFor(node *corev1.Node) *resourcev1.ResourceSlice {
	gpus := node.Status.Capacity["nvidia.com/gpu"]
	if node.Annotations["kwok.x-k8s.io/node"] != "fake" || gpus.Value() <= 0 {
		return nil
	}
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:            node.Name + "-" + Driver,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
		},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   Driver,
			NodeName: ptr.To(node.Name),
			Pool:     resourcev1.ResourcePool{Name: node.Name, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for i := range gpus.Value() {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"productName": {StringValue: ptr.To(ProductName)},
				"index":       {IntValue: ptr.To(i)},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}},
		})
	}
	return s
}
