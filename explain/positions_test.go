package explain

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
)

// visibilityServer answers every request with status and body, as JSON
// unless contentType says otherwise, and records the paths asked for.
type visibilityServer struct {
	status      int
	body        string
	contentType string

	mu    sync.Mutex
	paths []string
}

func (s *visibilityServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	w.Header().Set("Content-Type", cmp.Or(s.contentType, "application/json"))
	w.WriteHeader(s.status)
	_, _ = w.Write([]byte(s.body))
}

func (s *visibilityServer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paths
}

// serve starts a visibility API answering status and body, and a client of it.
func serve(t *testing.T, status int, body, contentType string) (*VisibilityPositions, *visibilityServer) {
	t.Helper()
	s := &visibilityServer{status: status, body: body, contentType: contentType}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	v, err := NewVisibilityPositions(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return v, s
}

func pendingSummary(t *testing.T, items ...visibility.PendingWorkload) string {
	t.Helper()
	data, err := json.Marshal(visibility.PendingWorkloadsSummary{Items: items})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func pendingWorkload(namespace, name string, inLocalQueue, inClusterQueue int32) visibility.PendingWorkload {
	return visibility.PendingWorkload{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		PositionInLocalQueue: inLocalQueue, PositionInClusterQueue: inClusterQueue}
}

// apiStatus is the body of an API server's failure.
func apiStatus(t *testing.T, code int32, reason metav1.StatusReason, message string) string {
	t.Helper()
	data, err := json.Marshal(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestVisibilityPositionsPosition(t *testing.T) {
	cases := map[string]struct {
		status      int
		body        string
		contentType string
		want        *Position
		// wantErr is what the error says; "" for none.
		wantErr string
		// wantReason: the caller can still tell why the API server refused.
		wantReason metav1.StatusReason
	}{
		"the workload among the pending": {
			status: http.StatusOK,
			body:   pendingSummary(t, pendingWorkload("ml", "other", 0, 4), pendingWorkload("ml", "trainjob-llama-1a2b3", 2, 5)),
			want:   &Position{InLocalQueue: 2, InClusterQueue: 5},
		},
		"at the head of its queues": {
			status: http.StatusOK,
			body:   pendingSummary(t, pendingWorkload("ml", "trainjob-llama-1a2b3", 0, 0)),
			want:   &Position{},
		},
		"not among the pending": {
			status:  http.StatusOK,
			body:    pendingSummary(t, pendingWorkload("ml", "other", 0, 4)),
			wantErr: "not among the pending workloads Kueue's visibility API lists",
		},
		"Kueue does not serve the visibility API": {
			status:  http.StatusNotFound,
			body:    apiStatus(t, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource"),
			wantErr: "Kueue's visibility API is not served on this cluster",
		},
		"the caller may not read it": {
			status: http.StatusForbidden,
			body:   apiStatus(t, http.StatusForbidden, metav1.StatusReasonForbidden, `user "ada" cannot get resource "localqueues/pendingworkloads"`),
			// The Status's own words reach the user.
			wantErr:    `Kueue's visibility API: user "ada" cannot get resource "localqueues/pendingworkloads"`,
			wantReason: metav1.StatusReasonForbidden,
		},
		"the API fails": {
			status:      http.StatusInternalServerError,
			body:        "the queue manager is not ready",
			contentType: "text/plain",
			wantErr:     "Kueue's visibility API: an error on the server (\"the queue manager is not ready\")",
			wantReason:  metav1.StatusReasonInternalError,
		},
		"an answer that is not a summary": {
			status:  http.StatusOK,
			body:    `{"items": "none"}`,
			wantErr: "decoding Kueue's visibility answer",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, srv := serve(t, tc.status, tc.body, tc.contentType)
			got, err := v.Position(t.Context(), "ml", "team-a", "trainjob-llama-1a2b3")
			if diff := gocmp.Diff([]string{"/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/team-a/pendingworkloads"}, srv.asked()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want an error saying %q", got, err, tc.wantErr)
				}
				if reason := apierrors.ReasonForError(err); reason != tc.wantReason {
					t.Errorf("reason %q of %v, want %q", reason, err, tc.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("position (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVisibilityPositionsClusterQueuePositions(t *testing.T) {
	cases := map[string]struct {
		status  int
		body    string
		want    map[string]int32
		wantErr string
	}{
		"positions of every pending workload, by namespace and name": {
			status: http.StatusOK,
			body:   pendingSummary(t, pendingWorkload("ml", "llama", 0, 0), pendingWorkload("cv", "llama", 0, 1), pendingWorkload("ml", "bert", 1, 2)),
			want:   map[string]int32{"ml/llama": 0, "cv/llama": 1, "ml/bert": 2},
		},
		"nothing pending": {
			status: http.StatusOK,
			body:   pendingSummary(t),
			want:   map[string]int32{},
		},
		"Kueue does not serve the visibility API": {
			status:  http.StatusNotFound,
			body:    "404 page not found",
			wantErr: "Kueue's visibility API is not served on this cluster",
		},
		"an answer that is not JSON": {
			status:  http.StatusOK,
			body:    "<html>",
			wantErr: "decoding Kueue's visibility answer",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, srv := serve(t, tc.status, tc.body, "")
			got, err := v.ClusterQueuePositions(t.Context(), "cq-a")
			if diff := gocmp.Diff([]string{"/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq-a/pendingworkloads"}, srv.asked()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("positions (-want +got):\n%s", diff)
			}
		})
	}
}

// The caller's kubeconfig keeps serving its other clients.
func TestNewVisibilityPositionsLeavesTheConfigAlone(t *testing.T) {
	cfg := &rest.Config{Host: "https://api.example.com", APIPath: "/api"}
	if _, err := NewVisibilityPositions(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.APIPath != "/api" || cfg.GroupVersion != nil || cfg.NegotiatedSerializer != nil {
		t.Errorf("config changed: APIPath %q, GroupVersion %v, serializer %v", cfg.APIPath, cfg.GroupVersion, cfg.NegotiatedSerializer)
	}
}

func TestNewVisibilityPositionsRefusesAnUnusableConfig(t *testing.T) {
	cfg := &rest.Config{Host: "https://api.example.com", TLSClientConfig: rest.TLSClientConfig{CAFile: t.TempDir() + "/missing-ca.crt"}}
	if _, err := NewVisibilityPositions(cfg); err == nil || !strings.Contains(err.Error(), "missing-ca.crt") {
		t.Errorf("error %v, want one naming the CA file", err)
	}
}
