# trainjob-kueue — everything a fresh machine needs is built here from Go
# modules; nothing is downloaded as a binary.

SHELL := /usr/bin/env bash
GO ?= go
# KUBERNETES_VERSION: the local cluster's control plane, v1.37.2
# (Kubernetes' Workload API: GenericWorkload on, Kubernetes' own
# kube-scheduler gang scheduling its PodGroups) or v1.34.4 (kube-scheduler
# from scheduler-plugins, coscheduling: the e2e tier's coscheduling tests
# run on a cluster of it); docs/local-cluster.md.
KUBERNETES_VERSION ?= v1.37.2
KUBE_VERSION ?= $(KUBERNETES_VERSION)
# The integration tier's kube-apiserver (envtest): v1.34.4, whose flags
# envtest's defaults suit (v1.37 refuses its loopback advertise address).
ENVTEST_KUBE_VERSION ?= v1.34.4
ASSETS := $(CURDIR)/bin/envtest

CLUSTER ?= local
TRAINER_VERSION ?= v2.1.0
KUEUE_VERSION ?= v0.19.2
INTEGRATION ?= ours
KUEUE_CONFIG ?=
KUEUE_FEATURE_GATES ?=
# DRA=true: Dynamic Resource Allocation on the local cluster, with a fake GPU
# driver (docs/local-cluster.md).
DRA ?= false
# PROVISIONING=true: ProvisioningRequests on the local cluster (Kueue's
# provisioning admission check), with a fake provisioner standing in for
# cluster-autoscaler (hack/fakeprovisioner; docs/provisioning.md).
PROVISIONING ?= false
# REPLICAS=2: two replicas of trainjob-kueue on the local cluster, leader
# election on, their webhooks called through a loopback Service that sends
# each connection to a ready replica (hack/loopbackservice), as a
# Deployment's are.
REPLICAS ?= 1

.PHONY: prefetch generate verify-generate all build plugin krew image image-push deploy bench bench-forecast bench-forecast-scale bench-gang bench-notice bench-sweep bench-smoke bench-check bench-baseline scale scale-harness test test-install test-image test-smoke test-full test-unit test-integration test-e2e test-e2e-main test-deployed test-deployed-helm test-reliability test-reliability-smoke fuzz vet envtest-assets components cluster-up cluster-down cluster-switch multikueue-up demo dashboard-picture clean

all: build

build:
	$(GO) build -o bin/trainjob-kueue ./cmd/trainjob-kueue

## plugin: the kubectl plugin (kubectl trainjob-kueue explain …); put
## bin/kubectl-trainjob_kueue on your PATH.
plugin:
	$(GO) build -o bin/kubectl-trainjob_kueue ./cmd/kubectl-trainjob_kueue

## krew: the plugin's krew release in bin/krew: an archive per platform and
## the manifest trainjob-kueue.yaml (checked by krew's validation in
## make test-install), for KREW_VERSION (semver with a v).
KREW_VERSION ?= v0.1.0
krew:
	cd hack/tools/krew && $(GO) run . -root $(CURDIR) -version $(KREW_VERSION) -commit '$(COMMIT)' -out $(CURDIR)/bin/krew

# The image: the version and commit stamped into the binary and its labels,
# its creation time the commit's (SOURCE_DATE_EPOCH overrides), so the same
# commit builds the same image.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
# Where to push, or which image to deploy: registry/trainjob-kueue:tag. No
# default, and never an implicit latest.
IMG ?=
KUBECTL ?= $(shell command -v kubectl 2>/dev/null)
IMAGE_TOOL = cd hack/tools/image && $(GO) run .

## image: the manager's multi-arch (IMAGE_PLATFORMS) OCI image without a
## Docker engine: hack/build-manager.sh (the Dockerfile's build) per platform,
## onto an empty base, non-root 65532:65532, entrypoint /manager; written as
## an OCI layout to bin/image, and this host's platform as a docker-load
## tarball to bin/image-linux-ARCH.tar.
image:
	$(IMAGE_TOOL) build -root $(CURDIR) -out $(CURDIR)/bin/image -version '$(VERSION)' -commit '$(COMMIT)' \
	  -platforms $(IMAGE_PLATFORMS) -docker-tarball $(CURDIR)/bin/image-linux-$$($(GO) env GOARCH).tar

## image-push: make image, then push its multi-arch index with your Docker
## credentials: make image-push IMG=registry/trainjob-kueue:tag
image-push:
	@$(IMAGE_TOOL) push -check -image '$(IMG)'
	$(MAKE) --no-print-directory image
	$(IMAGE_TOOL) push -layout $(CURDIR)/bin/image -image '$(IMG)'

## deploy: config/default with the manager's image set (kustomize images:),
## make deploy IMG=registry/trainjob-kueue:tag; written to bin/deploy.yaml and
## applied with kubectl when it is on PATH (KUBECTL= only writes it).
deploy:
	cd hack/tools/image && $(GO) run ./render -config $(CURDIR)/config/default -image '$(IMG)' -o $(CURDIR)/bin/deploy.yaml
	@if [ -n "$(KUBECTL)" ]; then set -x; $(KUBECTL) apply -f bin/deploy.yaml; \
	  else echo "no kubectl (on PATH or KUBECTL): the install, with image $(IMG), is in bin/deploy.yaml; kubectl apply -f bin/deploy.yaml"; fi

## test: every tier on the default configuration, plus a smoke of Trainer
## v2.0.1 and v2.3.0 and of Kueue v0.16.2 (make test-full: every release).
test: prefetch vet test-unit test-install test-image test-integration test-smoke

## prefetch: start building, in the background at the lowest CPU priority,
## every component binary make test needs later (hack/prefetch-components.sh,
## log in bin/prefetch.log). On a cold machine the builds use the CPU the
## first tiers leave idle; a tier needing a binary still being built waits
## for it (one lock per tools module), never builds it twice. Returns at once.
prefetch:
	@mkdir -p bin
	@nohup nice -n 19 hack/prefetch-components.sh '$(TRAINER_VERSION)' '$(sort $(SMOKE_TRAINER_VERSIONS) $(SMOKE_MULTIKUEUE_VERSIONS) $(BENCH_TRAINER))' '$(KUEUE_VERSION) $(SMOKE_KUEUE_VERSIONS)' >bin/prefetch.log 2>&1 </dev/null &

# The releases make test-full runs the whole e2e tier on besides the
# defaults (make test-e2e), and the older Kueue releases it runs the main
# scenarios on (with Trainer v2.1.0).
FULL_TRAINER_VERSIONS ?= v2.0.1 v2.2.0 v2.3.0
FULL_KUEUE_VERSIONS ?= v0.16.2
# make test's subset: Trainer's other two override shapes, v2.0's
# podSpecOverrides and v2.3's runtimePatches with its runtime snapshot and
# one-request start. v2.2 has v2.3's shape (the integration tier runs
# v2.2.1's controller and webhooks); v2.2.0's own difference, a webhook
# refusing the one-request start, is unit-tested (TestStart), and its e2e
# runs in make test-full: that keeps make test under an hour on a cold
# machine.
SMOKE_TRAINER_VERSIONS ?= v2.0.1 v2.3.0
# Trainer v2.3 is the first whose controller may run on a MultiKueue manager.
SMOKE_MULTIKUEUE_VERSIONS ?= v2.3.0
# make test's MultiKueue smoke runs the whole suite but these (make
# test-full runs them): a dispatch blocked on the only worker with quota,
# by a same-named job or a missing runtime.
SMOKE_MULTIKUEUE_SKIP := TestADispatchedJobWaitsWithoutQuotaUntilTheSameNamedJobIsGone|TestADispatchedJobWhoseRuntimeIsMissingOnTheWorkerRunsOnceItIsThere
# Older Kueue releases the same binary serves (with Trainer v2.1.0).
SMOKE_KUEUE_VERSIONS ?= v0.16.2
SMOKE_TESTS := TestGPUTrainJobsRunWholeOnTheirFlavorsAndComplete|TestTheQueueConditionTellsEachStateInTurn|TestPriorityPreemptionSuspendsAndRestores|TestAdmissionWritesAsFewRequestsAsTheReleaseAllows|TestOverSubscribedGangsStartWholeOneAtATime|TestInitializersThenTrainerNodesUnderTrainersCoscheduling
# Clusters at once. Four: three left the 2-core machine idle a third of
# the time; six kept it saturated (each smoke 1.5-2 times as long, and a
# starved cluster's bring-up failed).
SMOKE_PARALLEL ?= 4
# On the older Kueue releases: what reads Kueue's Workloads (admission to
# flavors, the queue condition, preemption, gangs); Trainer's coscheduling
# and the request count of the start do not change with Kueue's release
# (make test-full runs them there).
SMOKE_KUEUE_TESTS := TestGPUTrainJobsRunWholeOnTheirFlavorsAndComplete|TestTheQueueConditionTellsEachStateInTurn|TestPriorityPreemptionSuspendsAndRestores|TestOverSubscribedGangsStartWholeOneAtATime
# The main e2e tier in two halves, each on a cluster of its own, so the
# pool's longest entry is no longer the whole tier: these tests, then the
# others (about as long).
MAIN_FIRST_HALF := TestTheExpectedStartComesFromWhatTellsTheRunningJobsEnd|TestTheQueueConditionTellsEachStateInTurn|TestGangReadmittedAfterSomeIndexesSucceededStartsTheRest|TestOverSubscribedGangsStartWholeOneAtATime|TestGPUTrainJobsRunWholeOnTheirFlavorsAndComplete|TestFinishedInitializersFreeQuotaForAWaitingJob
# Trainer v2.3's runtime snapshot (the main e2e tier runs the same test on
# v2.1.0, where Trainer has none).
SMOKE_SNAPSHOT_TESTS := TestRuntimeEditedWhileQueuedBooksWhatThePodsGet|TestRuntimeDeletedUnderAQueuedJobHoldsItUntilTheRuntimeIsBack
# The preemption-cost policy's share of make test (make test-full runs the
# whole suite).
SMOKE_PREEMPTION_COST_TESTS := TestANotice|TestAVictimThatCompletesInItsNoticeIsNotPreempted|TestNoNoticeWithoutThePolicy|TestOneArrivalPreemptsOneJobNeverACascade|TestAnEvictionWhileTrainJobKueueIsDownCascadesNot|TestTheVictimFlipsWithThePolicy|TestBoostWritesAreBoundedByThePolicysSteps|TestAJobJustAdmittedIsSparedForItsMinimumRunTime|TestTheVictimIsTheJobThatCheckpointedLast
# Trainer v2.0 shares one override entry between roles: its own answer.
SMOKE_SHARED_ENTRY_TESTS := TestAnEntrySharedByRolesAdmittedToDifferentFlavors
## test-smoke: the main e2e tier (test-e2e-main's two suites, in two
## halves); the e2e scenarios that matter most, on each other Trainer
## release and each other Kueue release; MultiKueue with Trainer's full
## controller on the manager; make test's shares of the as-deployed and
## reliability tiers; the bench smoke. Each has a cluster of its own;
## SMOKE_PARALLEL of them run at once, longest first.
test-smoke: components
	@for v in $(sort $(SMOKE_TRAINER_VERSIONS) $(SMOKE_MULTIKUEUE_VERSIONS) $(BENCH_TRAINER)); do \
	  $(MAKE) --no-print-directory components TRAINER_VERSION=$$v || exit 1; \
	done
	@for k in $(SMOKE_KUEUE_VERSIONS); do KUEUE_VERSION=$$k hack/component.sh kueue >/dev/null || exit 1; done
	hack/smoke.sh $(SMOKE_PARALLEL) \
	  'preemption-cost e2e (Trainer v2.3.0, Kueue PriorityBoost on)||-timeout 20m -parallel 4 -run $(SMOKE_PREEMPTION_COST_TESTS) ./test/e2e/preemptioncost/' \
	  'main e2e tier, first half (Trainer $(TRAINER_VERSION), Kueue $(KUEUE_VERSION))|E2E_CLUSTER=e2e-first-half|-timeout 30m -run $(MAIN_FIRST_HALF) ./test/e2e/' \
	  'main e2e tier, second half (Trainer $(TRAINER_VERSION), Kueue $(KUEUE_VERSION))|E2E_CLUSTER=e2e-second-half|-timeout 30m -skip $(MAIN_FIRST_HALF) ./test/e2e/' \
	  $(foreach v,$(SMOKE_MULTIKUEUE_VERSIONS),'MultiKueue e2e with Trainer $(v) (its full controller on the manager)|E2E_TRAINER_VERSION=$(v)|-timeout 30m -skip $(SMOKE_MULTIKUEUE_SKIP) ./test/e2e/multikueue/') \
	  'switch from Kueue'"'"'s built-in TrainJob integration and back e2e (Kueue v0.19.2, Trainer v2.3.0)||-timeout 20m ./test/e2e/switchover/' \
	  'Workload API gangs e2e (Kubernetes v1.37.2)||-timeout 30m ./test/e2e/workloadapi/' \
	  $(foreach v,$(SMOKE_TRAINER_VERSIONS),'e2e smoke on Trainer $(v)|E2E_TRAINER_VERSION=$(v)|-timeout 20m -run $(SMOKE_TESTS)$(if $(filter v2.3%,$(v)),|$(SMOKE_SNAPSHOT_TESTS))$(if $(filter v2.0%,$(v)),|$(SMOKE_SHARED_ENTRY_TESTS)) ./test/e2e/') \
	  $(foreach k,$(SMOKE_KUEUE_VERSIONS),'e2e smoke on Kueue $(k) (Trainer v2.1.0)|E2E_KUEUE_VERSION=$(k)|-timeout 20m -run $(SMOKE_KUEUE_TESTS) ./test/e2e/') \
	  'recovery-timeout eviction e2e (Trainer $(TRAINER_VERSION))||-timeout 20m ./test/e2e/recovery/' \
	  'reliability smoke (Trainer $(TRAINER_VERSION))||-timeout 20m -parallel $(RELIABILITY_PARALLEL) -run $(RELIABILITY_SMOKE_TESTS) ./test/reliability/' \
	  'as-deployed smoke||-timeout 30m -run $(DEPLOYED_SMOKE_TESTS) ./test/e2e/deployed/' \
	  'waitForPodsReady e2e (Trainer $(TRAINER_VERSION))||-timeout 20m ./test/e2e/podsready/' \
	  'bench smoke: the side by side on $(BENCH_SMOKE_N) jobs (Trainer $(BENCH_TRAINER))||$(BENCH_SMOKE_RUN)' \
	  'benchmarks of the hot paths, 100 iterations||$(BENCH_SMOKE_MICRO)' \
	  'DRA e2e (Kueue v0.19.2, Trainer v2.3.0, a fake GPU driver)||-timeout 15m ./test/e2e/dra/'

## test-full: everything, fully: all tiers on every Trainer release, and
## longer fuzzing.
test-full: vet test-unit test-install test-image test-integration test-e2e test-deployed test-deployed-helm test-reliability
	@for v in $(FULL_TRAINER_VERSIONS); do \
	  $(MAKE) --no-print-directory components TRAINER_VERSION=$$v || exit 1; \
	  E2E_TRAINER_VERSION=$$v $(GO) test -p 1 -count=1 -timeout 40m ./test/e2e/... || exit 1; \
	done
	@for k in $(FULL_KUEUE_VERSIONS); do \
	  KUEUE_VERSION=$$k hack/component.sh kueue >/dev/null || exit 1; \
	  E2E_KUEUE_VERSION=$$k $(GO) test -count=1 -timeout 20m -run '$(SMOKE_TESTS)' ./test/e2e/ || exit 1; \
	  E2E_KUEUE_VERSION=$$k E2E_TRAINER_VERSION=v2.1.0 $(GO) test -count=1 -timeout 30m ./test/e2e/switchover/ || exit 1; \
	done
	E2E_PREEMPTION_COST_TRAINER=v2.1.0 $(GO) test -count=1 -timeout 20m -parallel 4 -run 'TestTheVictimIsTheJobThatCheckpointedLastByItsDeclaredInterval|TestANoticeRunsOutWithoutACheckpoint|TestANoticesGraceIsSaidWhereTheRuntimeGivesLess|TestANoticeEndsWhenItsWorkloadIsDeleted|TestNoNoticeWithoutThePolicy' ./test/e2e/preemptioncost/
	$(MAKE) fuzz FUZZTIME=5m
	$(GO) test -run '^$$' -fuzz FuzzInjectThenRestoreIsIdentity -fuzztime 5m ./shape/

## generate: the deepcopy functions of trainjob/, config/rbac/role.yaml
## from the +kubebuilder:rbac markers and config/webhook/manifests.yaml from
## the +kubebuilder:webhook markers with config/webhook/selectors.yaml (controller-gen, built from
## hack/tools/controller-gen into the binary cache).
CONTROLLER_GEN = $$(hack/build-tool.sh controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen controller-gen)
generate:
	$(CONTROLLER_GEN) object paths=./trainjob/...
	$(CONTROLLER_GEN) rbac:roleName=trainjob-kueue-manager-role paths=./... output:rbac:artifacts:config=config/rbac
	@tmp=$$(mktemp -d) && $(CONTROLLER_GEN) webhook paths=./webhook/... output:webhook:artifacts:config=$$tmp && \
	  $(GO) run ./hack/webhookgen -generated $$tmp/manifests.yaml -selectors config/webhook/selectors.yaml -out config/webhook/manifests.yaml

## verify-generate: what make generate writes is what is committed.
verify-generate:
	@tmp=$$(mktemp -d) && cp trainjob/zz_generated.deepcopy.go $$tmp/ && \
	  $(CONTROLLER_GEN) object paths=./trainjob/... && \
	  if ! cmp -s trainjob/zz_generated.deepcopy.go $$tmp/zz_generated.deepcopy.go; then \
	    cp $$tmp/zz_generated.deepcopy.go trainjob/; echo "trainjob/zz_generated.deepcopy.go is stale: run make generate"; exit 1; fi
	@tmp=$$(mktemp -d) && $(CONTROLLER_GEN) rbac:roleName=trainjob-kueue-manager-role paths=./... output:rbac:artifacts:config=$$tmp && \
	  if ! cmp -s config/rbac/role.yaml $$tmp/role.yaml; then \
	    diff config/rbac/role.yaml $$tmp/role.yaml; echo "config/rbac/role.yaml is stale: run make generate (the +kubebuilder:rbac markers changed)"; exit 1; fi
	@tmp=$$(mktemp -d) && $(CONTROLLER_GEN) webhook paths=./webhook/... output:webhook:artifacts:config=$$tmp && \
	  $(GO) run ./hack/webhookgen -generated $$tmp/manifests.yaml -selectors config/webhook/selectors.yaml -out $$tmp/ours.yaml && \
	  if ! cmp -s config/webhook/manifests.yaml $$tmp/ours.yaml; then \
	    diff config/webhook/manifests.yaml $$tmp/ours.yaml; echo "config/webhook/manifests.yaml is stale: run make generate (the +kubebuilder:webhook markers or selectors.yaml changed)"; exit 1; fi

vet: verify-generate
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt wants to change: $$out"; exit 1; fi
	$(GO) vet ./...

## test-reliability: issue 16's reliability tiers in full (test/reliability),
## on each of RELIABILITY_TRAINER_VERSIONS, a cluster of its own each: the
## fault tier (the manager SIGKILLed at each step of an admission, the API
## server restarted mid-burst, every version of every job judged from the
## audit log), the bad-input table and the hot-loop check.
RELIABILITY_TRAINER_VERSIONS ?= v2.1.0 v2.3.0
RELIABILITY_PARALLEL ?= 12
test-reliability:
	@for v in $(RELIABILITY_TRAINER_VERSIONS); do \
	  $(MAKE) --no-print-directory components TRAINER_VERSION=$$v || exit 1; \
	  echo "reliability tiers on Trainer $$v"; \
	  E2E_TRAINER_VERSION=$$v $(GO) test -count=1 -timeout 40m -parallel $(RELIABILITY_PARALLEL) ./test/reliability/ || exit 1; \
	done

# make test's share: the manager killed at each write of a start, eight table
# rows, the hot-loop check.
RELIABILITY_SMOKE_TESTS := ^(TestBadInput|TestManagerKilledAtEachWriteOfTheStart|TestManagerIsQuietWhenNothingHappens)$$/^(negative-cpu|half-a-gpu|forged-marker-at-create|two-topology-annotations|namespace-without-queues|priority-class-naming-nothing|user-forges-an-entry-while-queued|job-deleted-mid-admission|runtime-deleted-by-force-then-admitted)$$
## test-reliability-smoke: a representative subset of test-reliability on the
## default Trainer (part of make test).
test-reliability-smoke: components
	$(GO) test -count=1 -timeout 20m -parallel $(RELIABILITY_PARALLEL) -run '$(RELIABILITY_SMOKE_TESTS)' ./test/reliability/

## test-install: the Helm chart and config/default render the same objects
## (rendered with Helm's and kustomize's Go libraries, a module of its own);
## the chart's alerts and dashboard parse as PromQL (Prometheus' parser, a
## module of its own too) and query only exported metrics.
test-install:
	cd test/install && $(GO) test -count=1 ./...
	cd hack/tools/krew && $(GO) test -count=1 ./...
	cd test/monitoring && $(GO) test -count=1 ./...

## test-image: make image's build (both platforms; make test: the host's), checked (non-root,
## entrypoint, labels, /manager 0755 65532, the binary's --version, the
## Dockerfile's build), pushed to an in-process registry; make deploy's
## renderer. A module of its own (hack/tools/image).
test-image:
	cd hack/tools/image && $(GO) vet ./... && IMAGE_TEST_PLATFORMS=$(IMAGE_TEST_PLATFORMS) $(GO) test -count=1 -timeout 30m ./...

# The platforms test-image builds: make image's two, but in make test the
# host's alone (each is a whole cold build of the manager, about five
# minutes on 2 cores; make test-full builds both).
IMAGE_TEST_PLATFORMS ?= linux/amd64,linux/arm64
test: IMAGE_TEST_PLATFORMS = linux/$(shell $(GO) env GOARCH)

# Every package outside test/, which holds the tiers that need a control
# plane, and only those (a rule, not a list): a new package is tested
# without being listed.
test-unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v '/trainjob-kueue/test/')

## test-integration: real kube-apiserver + etcd, Kueue core and Trainer v2.2.1
## in process, JobSet v0.12.0 as a process.
test-integration: envtest-assets
	KUBEBUILDER_ASSETS=$(ASSETS) $(GO) test -count=1 -timeout 20m ./test/integration/...

## fuzz: a short run of the PodSet fuzz target (make fuzz FUZZTIME=10m for more).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzPodSets -fuzztime $(FUZZTIME) ./podsets/

# etcd and kube-apiserver for envtest, built once per machine into the binary
# cache (hack/build-tool.sh) and linked here.
envtest-assets:
	@mkdir -p $(ASSETS)
	@ln -sf "$$(hack/component.sh etcd)" $(ASSETS)/etcd
	@ln -sf "$$(KUBE_VERSION=$(ENVTEST_KUBE_VERSION) hack/component.sh kube-apiserver)" $(ASSETS)/kube-apiserver
	@# The tier runs JobSet v0.12.0 (the module's) as a process: its feature
	@# gates collide with Kueue v0.19's in one binary.
	@TRAINER_VERSION=v2.3.0 hack/component.sh jobset-controller-manager >/dev/null

# Every component's modules, fetched in the background while the first
# builds compile (hack/download-modules.sh; its log in bin/download.log),
# and the longest build, kube-apiserver's, started at once beside the
# command's own compile (bin/early-build.log): on a cold machine it is the
# cluster's longest chain (then kube-controller-manager and kubectl, one
# after another in its tools module). A warm machine finds it cached.
# EARLY_BUILDS: 2 while the early build runs beside the command's compile
# (what its estimate is multiplied by), else 1.
EARLY_BUILDS = $$(test -x "$$(BUILD_TOOL_WHERE=1 hack/component.sh kube-apiserver)" && echo 1 || echo 2)
START_EARLY = mkdir -p bin && (hack/download-modules.sh '$(TRAINER_VERSION)' '$(KUEUE_VERSION)' >bin/download.log 2>&1 &) && (BUILDS_SIDE_BY_SIDE=2 hack/component.sh kube-apiserver >/dev/null 2>bin/early-build.log &)

## components: build every control-plane binary into the cache (progress shown).
components:
	@$(START_EARLY)
	@for c in $$(hack/component.sh --list); do KUBE_VERSION=$(KUBE_VERSION) TRAINER_VERSION=$(TRAINER_VERSION) KUEUE_VERSION=$(KUEUE_VERSION) hack/component.sh $$c >/dev/null || exit 1; done

## cluster-up: the whole local control plane in the background.
cluster-up:
	@$(START_EARLY)
	$(GO) run ./hack/cluster up -name $(CLUSTER) -kubernetes-version $(KUBERNETES_VERSION) -trainer-version $(TRAINER_VERSION) -kueue-version $(KUEUE_VERSION) -integration $(INTEGRATION) $(if $(KUEUE_CONFIG),-kueue-config $(KUEUE_CONFIG)) $(if $(KUEUE_FEATURE_GATES),-kueue-feature-gates $(KUEUE_FEATURE_GATES)) -dra=$(DRA) -provisioning=$(PROVISIONING) -replicas $(REPLICAS)

## multikueue-up: a MultiKueue manager (mk-manager) and two workers
## (mk-worker1, mk-worker2), connected, each with INTEGRATION. Switch the
## whole set-up in the runbook's order: make cluster-switch CLUSTER=mk-manager INTEGRATION=…
multikueue-up:
	$(GO) run ./hack/cluster multikueue -kubernetes-version $(KUBERNETES_VERSION) -trainer-version $(TRAINER_VERSION) -kueue-version $(KUEUE_VERSION) -integration $(INTEGRATION) -replicas $(REPLICAS)

## cluster-switch: switch a running cluster's TrainJobs, live, to
## INTEGRATION=ours (trainjob-kueue) or intree (Kueue's built-in), in the
## runbook's order (docs/install.md): make cluster-switch CLUSTER=… INTEGRATION=ours
## (a MultiKueue manager's CLUSTER switches its workers and itself).
cluster-switch:
	$(GO) run ./hack/cluster switch -name $(CLUSTER) -integration $(INTEGRATION)

## cluster-down: stop a cluster (CLUSTER=all for every one) and remove its state.
cluster-down:
	$(GO) run ./hack/cluster down -name $(CLUSTER)

## test-e2e: scenarios on the local control plane (its own cluster "e2e",
## or the one KUBECONFIG points at).
test-e2e: test-e2e-main
	$(GO) test -count=1 -timeout 30m ./test/e2e/multikueue/
	$(GO) test -count=1 -timeout 20m ./test/e2e/recovery/
	$(GO) test -count=1 -timeout 25m ./test/e2e/preemptioncost/
	$(GO) test -count=1 -timeout 30m ./test/e2e/switchover/
	E2E_REPLICAS=2 $(GO) test -count=1 -timeout 30m ./test/e2e/switchover/
	$(GO) test -count=1 -timeout 40m ./test/e2e/multikueueswitch/
	$(GO) test -count=1 -timeout 15m ./test/e2e/dra/
	$(GO) test -count=1 -timeout 20m ./test/e2e/podsready/
	$(MAKE) --no-print-directory test-deployed DEPLOYED_TESTS='$(DEPLOYED_SMOKE_TESTS)'

# The e2e tiers but the as-deployed, recovery-timeout, preemption-cost,
# MultiKueue (and its switch), switch, waitForPodsReady and DRA ones (clusters of their own), one after another
# (make test runs them, or their shares, among the smokes, longest first).
test-e2e-main: components
	$(GO) test -p 1 -count=1 -timeout 40m $$($(GO) list ./test/e2e/... | grep -v -e /test/e2e/deployed -e /test/e2e/recovery -e /test/e2e/preemptioncost -e /test/e2e/multikueue -e /test/e2e/multikueueswitch -e /test/e2e/switchover -e /test/e2e/dra -e /test/e2e/podsready)

# The part of test-deployed make test runs: both replicas Ready with
# internal certificates, and a leader failover mid-burst.
DEPLOYED_SMOKE_TESTS := TestBothReplicasReadyWithInternalCertificates|TestLeaderDeletedMidBurstStandbyTakesOver|TestModeChangesRestartOneReplicaAtATimeAndNoWebhookCallFails
DEPLOYED_TESTS ?=
## test-deployed: trainjob-kueue exactly as shipped (test/e2e/deployed, its
## own cluster "e2e-deployed" without a trainjob-kueue of its own):
## config/default rendered and applied, its two replicas run from the
## image's binary with the Deployment's args and env, under the shipped
## ServiceAccount's token, certificates managed internally; leader
## failover (deleted, and SIGKILLed), certificate rotation and a rolling
## restart with jobs in flight. Runs as root (each replica is chrooted as
## the image's user). DEPLOYED_TESTS=regexp runs some; DEPLOYED_FROM=helm
## deploys the Helm chart with its defaults instead of config/default.
## test-deployed-helm: the same from the chart, and its smoke with a
## certificate Secret of another name (webhook.certSecretName).
DEPLOYED_FROM ?= kustomize
DEPLOYED_HELM_SET ?=
test-deployed: components
	DEPLOYED_FROM=$(DEPLOYED_FROM) DEPLOYED_HELM_SET='$(DEPLOYED_HELM_SET)' $(GO) test -count=1 -timeout 30m $(if $(DEPLOYED_TESTS),-run '$(DEPLOYED_TESTS)') ./test/e2e/deployed/
test-deployed-helm:
	$(MAKE) --no-print-directory test-deployed DEPLOYED_FROM=helm
	$(MAKE) --no-print-directory test-deployed DEPLOYED_FROM=helm DEPLOYED_HELM_SET=webhook.certSecretName=e2e-serving-cert DEPLOYED_TESTS='$(DEPLOYED_SMOKE_TESTS)'

## bench: trainjob-kueue side by side with Kueue's in-tree TrainJob
## integration and Kueue's bare queueing path (BENCH_N TrainJobs per set-up,
## BENCH_ROUNDS rounds), plus the PodSet micro-benchmark. Not part of make test.
BENCH_N ?= 2000
BENCH_ROUNDS ?= 1
BENCH_TRAINER ?= v2.3.0
bench:
	$(MAKE) --no-print-directory components TRAINER_VERSION=$(BENCH_TRAINER)
	$(GO) test -run '^$$' -bench . -benchmem ./podsets/ ./shape/ ./integration/ ./runtimesource/ ./webhook/ ./informercache/
	$(GO) run ./bench/sidebyside -n $(BENCH_N) -rounds $(BENCH_ROUNDS) -trainer-version $(BENCH_TRAINER) -kueue-version $(KUEUE_VERSION)

## bench-sweep: the same side by side at each of BENCH_SWEEP job counts, one
## after another (.bench/n<N>/ each, .bench/sweep.json and sweep.png: requests
## and CPU per job and the start's p99 against N). About 80 minutes on the
## 2-core machine. Not part of make test.
BENCH_SWEEP ?= 500,1000,2000
bench-sweep:
	$(MAKE) --no-print-directory components TRAINER_VERSION=$(BENCH_TRAINER)
	$(GO) run ./bench/sidebyside -sweep $(BENCH_SWEEP) -rounds $(BENCH_ROUNDS) -trainer-version $(BENCH_TRAINER) -kueue-version $(KUEUE_VERSION)

## scale: SCALE_N TrainJobs queued (a mix of runtimes), admitted in waves;
## memory of trainjob-kueue and Kueue over time, admission -> unsuspend
## latency, a runtime edit under thousands of jobs, and a cold start with
## all of them present (.bench/scale.json, .bench/scale.png). Not part of
## make test.
SCALE_N ?= 10000
scale:
	$(MAKE) --no-print-directory components TRAINER_VERSION=$(BENCH_TRAINER)
	$(GO) test -run '^$$' -bench 'BenchmarkPodSetMemo|BenchmarkJobsByState|BenchmarkCachedBytesPerQueuedJob' -benchmem ./metrics/ ./runtimesource/ ./informercache/
	$(GO) run ./bench/scale -n $(SCALE_N) -trainer-version $(BENCH_TRAINER) -kueue-version $(KUEUE_VERSION)

## scale-harness: Kueue's harness scale (docs/scale.md): SCALE_HARNESS_N
## TrainJobs, each Workload held after its quota reservation by an admission
## check that never turns Ready (no pod runs), side by side with as many bare
## Workloads (the floor) and with Kueue's in-tree integration: created ->
## QuotaReserved, the time to reserve them all, CPU and RSS
## (.bench/harness-n<N>/). Not part of make test.
SCALE_HARNESS_N ?= 15000
SCALE_HARNESS_SETUPS ?= floor,ours,intree
scale-harness:
	$(MAKE) --no-print-directory components TRAINER_VERSION=$(BENCH_TRAINER)
	$(GO) run ./bench/sidebyside -hold -n $(SCALE_HARNESS_N) -rate 20 -setups $(SCALE_HARNESS_SETUPS) -timeout 150m -out .bench/harness-n$(SCALE_HARNESS_N) -trainer-version $(BENCH_TRAINER) -kueue-version $(KUEUE_VERSION)

## bench-forecast: how well the expected start foretells a queued job's
## real start (bench/forecastaccuracy: an over-subscribed queue of jobs of
## known durations, half reporting progress; ~12 minutes; .bench/forecast/).
bench-forecast:
	$(MAKE) --no-print-directory components TRAINER_VERSION=v2.3.0
	$(GO) test -count=1 -timeout 40m -run '^$$' -bench BenchmarkExpectedStartAccuracy -benchtime 1x -v ./bench/forecastaccuracy/

## bench-forecast-scale: what list -A -o wide and explain cost over 1,000,
## 3,000 and 10,000 queued TrainJobs, on one ClusterQueue and spread over a
## cohort of ten (bench/forecastscale: the plugin binary against a real
## kube-apiserver and etcd with Kueue's and Trainer's CRDs; ~15 minutes),
## and the forecast alone (explain's BenchmarkForecast). Not part of make test.
bench-forecast-scale: envtest-assets
	$(GO) test -run '^$$' -bench BenchmarkForecast -benchtime 3x ./explain/
	KUBEBUILDER_ASSETS=$(ASSETS) $(GO) test -count=1 -timeout 60m -run '^$$' -bench BenchmarkListAtScale -benchtime 1x ./bench/forecastscale/

## bench-gang: how long a gang of 8 pods × 8 GPUs takes from its admission
## to all its pods bound, in gang mode coscheduling (Kubernetes v1.34.4,
## scheduler-plugins) and workload-api (v1.37.2, Kubernetes' own), a
## cluster each (bench/gangs; GANG_JOBS jobs each); then one gang of
## 1,000 pods in each mode: its pod creates through our webhook (latency,
## failures) and its placement (docs/benchmark.md).
GANG_JOBS ?= 20
bench-gang:
	$(MAKE) --no-print-directory components
	$(MAKE) --no-print-directory components KUBERNETES_VERSION=v1.37.2
	$(GO) test -count=1 -timeout 40m -run '^$$' -bench BenchmarkAdmittedToAllPodsBound -benchtime $(GANG_JOBS)x ./bench/gangs/
	$(GO) test -count=1 -timeout 40m -run '^$$' -bench BenchmarkAThousandPodGang -benchtime 1x ./bench/gangs/

## bench-notice: what the preemption notice saves under churn (bench/notice):
## four 4-GPU jobs checkpointing every minute and reacting to a notice,
## eight arrivals preempting them, under Kueue's built-in integration, ours
## without the notice and ours with a 120 s one (trainjob-kueue killed and
## restarted in one notice): GPU-seconds lost per preemption, the arrivals'
## wait, notices run out and lost (docs/benchmark.md).
bench-notice:
	$(MAKE) --no-print-directory components TRAINER_VERSION=v2.3.0
	$(GO) test -count=1 -timeout 60m -run '^$$' -bench BenchmarkPreemptionNotice -benchtime 1x ./bench/notice/

## bench-smoke: the benchmark's whole path on a small load (part of make test).
## make test runs the same two in its pool of smokes.
BENCH_SMOKE_N := 24
BENCH_SMOKE_MICRO = -run ^$$ -bench BenchmarkPodSets|BenchmarkInject|BenchmarkWebhook -benchtime 100x ./podsets/ ./shape/ ./webhook/
BENCH_SMOKE_RUN = go run ./bench/sidebyside -n $(BENCH_SMOKE_N) -rate 8 -out .bench/smoke -trainer-version $(BENCH_TRAINER) -kueue-version $(KUEUE_VERSION)
bench-smoke:
	$(MAKE) --no-print-directory components TRAINER_VERSION=$(BENCH_TRAINER)
	hack/smoke.sh 2 'benchmarks of the hot paths||$(BENCH_SMOKE_MICRO)' 'the side by side||$(BENCH_SMOKE_RUN)'

## bench-check: trainjob-kueue alone at BENCH_CHECK_N jobs, each figure
## held to the committed baseline (bench/sidebyside/baseline.json: created ->
## Workload and admitted -> unsuspended p99, requests and CPU per job, no
## dry run): fails naming each figure beyond its bound. Not part of make test.
BENCH_CHECK_N ?= 60
BENCH_CHECK_RATE ?= 8
BENCH_CHECK_RUNS ?= 5
bench-check:
	$(MAKE) --no-print-directory components TRAINER_VERSION=$(BENCH_TRAINER)
	$(GO) run ./bench/sidebyside -setups ours -n $(BENCH_CHECK_N) -rate $(BENCH_CHECK_RATE) -out .bench/check -baseline bench/sidebyside/baseline.json -trainer-version $(BENCH_TRAINER) -kueue-version $(KUEUE_VERSION)

## bench-baseline: refresh bench/sidebyside/baseline.json from BENCH_CHECK_RUNS
## runs of bench-check's load (each figure's median; its bound from their
## spread; docs/benchmark.md).
bench-baseline:
	$(MAKE) --no-print-directory components TRAINER_VERSION=$(BENCH_TRAINER)
	for i in $$(seq $(BENCH_CHECK_RUNS)); do $(GO) run ./bench/sidebyside -setups ours -n $(BENCH_CHECK_N) -rate $(BENCH_CHECK_RATE) -out .bench/baseline/run$$i -trainer-version $(BENCH_TRAINER) -kueue-version $(KUEUE_VERSION) || exit 1; done
	$(GO) run ./bench/sidebyside -rate $(BENCH_CHECK_RATE) -baseline bench/sidebyside/baseline.json -make-baseline $$(seq -s, -f .bench/baseline/run%g $(BENCH_CHECK_RUNS))

## demo: the main job, on the local control plane, with Trainer v2.3.0
## (TRAINER_VERSION=… another): its controller and JobSet v0.12.0 share the
## main module's and Kueue's Kubernetes libraries (k8s.io v0.36), so a cold
## demo compiles no third family of them (docs/development.md).
demo: TRAINER_VERSION = v2.3.0
demo:
	@$(START_EARLY)
	@demo=$$(BUILDS_SIDE_BY_SIDE=$(EARLY_BUILDS) hack/build-tool.sh . ./hack/demo demo) && "$$demo" -cluster $(CLUSTER) -trainer-version $(TRAINER_VERSION)

## dashboard-picture: docs/dashboard.png, the chart's Grafana dashboard drawn
## from the manager's metrics scraped every 5 s while the demo runs
## (Prometheus' engine evaluates each panel's queries; test/monitoring).
DASHBOARD_SCRAPES = $(CURDIR)/.cache/dashboard-scrapes
dashboard-picture:
	@$(START_EARLY)
	$(GO) run ./hack/demo -cluster $(CLUSTER) -record-metrics $(DASHBOARD_SCRAPES)
	cd test/monitoring && $(GO) run ./dashboardpng -scrapes $(DASHBOARD_SCRAPES) -o $(CURDIR)/docs/dashboard.png

clean:
	rm -rf bin
