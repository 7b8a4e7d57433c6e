#!/usr/bin/env python3
"""A training loop that reacts to trainjob-kueue's preemption notice.

It trains (a small PyTorch model when torch is installed, a stand-in step
otherwise), checkpoints every CHECKPOINT_EVERY seconds, and reports each
checkpoint's time to Trainer's status server as the metric
last_checkpoint_unix_seconds (Trainer v2.2+ with the TrainJobStatus gate:
status.trainerStatus.metrics). When trainjob-kueue tells the pod it is being
preempted -- the annotation trainjob-kueue.dev/preempting, read through a
downwardAPI volume -- it checkpoints at once and reports it: trainjob-kueue
then stops the job within seconds, and the run resumes from that checkpoint
when Kueue admits it again. SIGTERM (the stop itself) ends the loop cleanly.

Runs anywhere: without Trainer's environment it reports to stdout, and
--once-notice-in N plays a notice after N seconds (python3 train.py
--steps 50 --once-notice-in 3).
"""

import argparse
import json
import os
import signal
import ssl
import sys
import time
import urllib.request

NOTICE_KEY = "trainjob-kueue.dev/preempting"
METRIC = "last_checkpoint_unix_seconds"


def read_notice(path):
    """The notice in the downwardAPI file of the pod's annotations, or None.

    The file holds one key="value" line per annotation, the value quoted
    as a Go string; the kubelet rewrites it when the annotations change
    (within its sync period, about a minute at worst)."""
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.strip().partition("=")
                if key == NOTICE_KEY:
                    return json.loads(json.loads(value))
    except FileNotFoundError:
        return None
    return None


def report_checkpoint(at):
    """Reports the checkpoint's time as Trainer's status server takes it."""
    body = {"trainerStatus": {"metrics": [{"name": METRIC, "value": str(int(at))}]}}
    url = os.environ.get("KUBEFLOW_TRAINER_SERVER_URL")
    if not url:
        print("report:", json.dumps(body), flush=True)
        return
    with open(os.environ["KUBEFLOW_TRAINER_SERVER_TOKEN"]) as f:
        token = f.read().strip()
    ctx = ssl.create_default_context(cafile=os.environ.get("KUBEFLOW_TRAINER_SERVER_CA_CERT"))
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    urllib.request.urlopen(req, context=ctx, timeout=10).read()


class Trainer:
    """One training step and a checkpoint of its state."""

    def __init__(self, path):
        self.path, self.step = path, 0
        try:
            import torch
            self.torch = torch
            self.model = torch.nn.Linear(16, 1)
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
            if os.path.exists(path):
                state = torch.load(path)
                self.model.load_state_dict(state["model"])
                self.step = state["step"]
        except ImportError:
            self.torch = None
            if os.path.exists(path):
                with open(path) as f:
                    self.step = json.load(f)["step"]

    def train_step(self):
        if self.torch:
            x = self.torch.randn(32, 16)
            loss = self.model(x).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        else:
            time.sleep(0.05)
        self.step += 1

    def save(self):
        tmp = self.path + ".tmp"
        if self.torch:
            self.torch.save({"model": self.model.state_dict(), "step": self.step}, tmp)
        else:
            with open(tmp, "w") as f:
                json.dump({"step": self.step}, f)
        os.replace(tmp, self.path)  # a checkpoint is whole or absent
        return time.time()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10**9)
    p.add_argument("--checkpoint", default=os.environ.get("CHECKPOINT_PATH", "/tmp/checkpoint"))
    p.add_argument("--checkpoint-every", type=float, default=float(os.environ.get("CHECKPOINT_EVERY", "1800")))
    p.add_argument("--annotations", default="/etc/podinfo/annotations")
    p.add_argument("--once-notice-in", type=float, default=None, help="play a notice after this many seconds (a demo without a cluster)")
    a = p.parse_args()

    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    t = Trainer(a.checkpoint)
    started = last = time.time()
    told = None
    while t.step < a.steps and not stop["now"]:
        t.train_step()
        now = time.time()
        notice = read_notice(a.annotations)
        if notice is None and a.once_notice_in is not None and now - started >= a.once_notice_in:
            notice = {"since": int(now), "until": int(now) + 120}
        if notice and notice != told:
            told = notice
            print(f"preemption notice: stop by {notice['until']}; checkpointing at step {t.step}", flush=True)
            last = t.save()
            report_checkpoint(last)
            if a.once_notice_in is not None:
                return 0  # the demo: what the stop would do
            continue  # trains on until stopped: the work after this checkpoint is the only work lost
        if now - last >= a.checkpoint_every:
            last = t.save()
            report_checkpoint(last)
    t.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
