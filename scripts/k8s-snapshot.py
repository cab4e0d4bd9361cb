#!/usr/bin/env python3
"""Generate a synthetic `kubectl get nodes,pods -A -o json` snapshot of a GPU cluster.

Deterministic for a given --seed (Python's `random.Random`, no other randomness), for
measuring `coplan import k8s` and `coplan plan` on realistic Kubernetes exports. Modelled on
examples/k8s/cluster-snapshot.yaml; docs/import.md says what the importer reads.

    python3 scripts/k8s-snapshot.py --nodes 200 --seed 1 > /tmp/k8s-200.json
    coplan import k8s /tmp/k8s-200.json --out-cluster c.toml --out-workload w.toml

The snapshot (a `kind: List`, items in creation order, creationTimestamp strictly increasing
over the pods):

- N nodes with 8 GPUs each (`nvidia.com/gpu: "8"`): about 60 % H100 nodes (p5.48xlarge,
  allocatable cpu "94") and 40 % H200 nodes (p5e.48xlarge, cpu "126"), with the labels
  GPU feature discovery sets (`nvidia.com/gpu.product`, `.count`, `.memory`, …). No
  NodeResourceTopology objects: the importer gives every node its default layout.
- Per node, 3 DaemonSet pods (kube-proxy, nvidia-device-plugin, dcgm-exporter) requesting
  100m–200m CPU, no GPU, Burstable, with DaemonSet ownerReferences.
- Running GPU pods (1, 2, 4 or 8 GPUs; 11 cores per GPU on H100 nodes, 15 on H200 nodes;
  requests == limits, so Guaranteed QoS) filling about --fill (default 95 %) of the GPUs:
  batch training at priority 100 (`batch-low`, Job-owned, preemptible) and serving at
  priority 1000 (`serving-high`, ReplicaSet-owned).
- About N/4 Pending pods (--pending): scale-ups of serving deployments at priority 1000,
  1500 or 2000, 1–8 GPUs with 11 cores per GPU (they fit either node type), no nodeName,
  `status.phase: Pending` with the scheduler's Unschedulable condition. They ask for about
  0.9 GPUs per node against about 0.4 free, so at least half of their GPUs must come from
  preemption (some small ones fit the free GPUs).

--split K writes the same objects as '---'-separated Lists of at most K items (a
multi-document stream).

--format yaml writes `-o yaml` (block style, as kubectl writes it), --format jsonl one compact
object per line (JSON Lines). --noise adds what real exports carry besides what coplan reads
(managedFields, NodeResourceTopology objects as NFD's topology-updater publishes them, three
more DaemonSets, native sidecars, a cordoned node, nodeSelector and required nodeAffinity,
runtime overhead, PodDisruptionBudgets), from a second generator so the base cluster stays the
same; --pods-per-node P (with --noise) adds finished Job pods and BestEffort pods up to about P
pods per node. The sizes the benchmarks use:

    python3 scripts/k8s-snapshot.py --nodes 8 --noise --format yaml
    python3 scripts/k8s-snapshot.py --nodes 2000 --noise --format yaml --out k8s-2000.yaml
    python3 scripts/k8s-snapshot.py --nodes 10000 --noise --pods-per-node 20 --format yaml \
        --out k8s-10k.yaml      # 10,000 nodes, 200,000 pods (cargo bench --bench k8s_import)

Without --noise and with the default --format json the output is byte for byte what earlier
versions wrote.
"""

import argparse
import datetime as dt
import json
import random
import sys
import uuid

NODE_TYPES = {
    # key: (instance type, gpu product, gpu memory MiB, allocatable cpu, cores per GPU of a pod)
    "h100": ("p5.48xlarge", "NVIDIA-H100-80GB-HBM3", 81559, 94, 11),
    "h200": ("p5e.48xlarge", "NVIDIA-H200", 143771, 126, 15),
}
NODE_CAPACITY_CPU = {"h100": 96, "h200": 128}  # capacity; allocatable is 2 cores less
NODE_MEMORY_MI = {"h100": 2063731, "h200": 2063731}
GPUS_PER_NODE = 8
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]

# DaemonSets: (name, namespace, image, cpu request, memory request, memory limit, priority class, priority)
DAEMONSETS = [
    ("kube-proxy", "kube-system", "registry.k8s.io/kube-proxy:v1.30.4", "100m", "64Mi", None,
     "system-node-critical", 2000001000),
    ("nvidia-device-plugin-daemonset", "gpu-operator",
     "nvcr.io/nvidia/k8s-device-plugin:v0.16.2", "150m", "128Mi", "512Mi",
     "system-node-critical", 2000001000),
    ("nvidia-dcgm-exporter", "gpu-operator", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.7-3.5.0-ubuntu22.04",
     "200m", "256Mi", "1Gi", None, 0),
]

# Running workloads by GPU count: (app, kind) ; kind "batch" (Job) or "serve" (ReplicaSet)
BATCH_APPS = {1: ["embed-train", "eval-sweep"], 2: ["llm-finetune-8b"], 4: ["llm-finetune-70b"],
              8: ["llm-pretrain"]}
SERVE_APPS = {1: ["chat-8b", "rerank-2b"], 2: ["chat-70b-fp8"], 4: ["chat-70b"], 8: ["chat-405b"]}
# Pending scale-ups: (app, priority class, priority)
PENDING_CLASSES = [("serving-high", 1000), ("serving-premium", 1500), ("serving-critical", 2000)]
PENDING_APPS = {1: "assist-8b", 2: "assist-70b-fp8", 4: "assist-70b", 8: "assist-405b"}
MEMORY_PER_GPU_GI = 200

ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of Kubernetes' generated name suffixes


def ts(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.rv = 1000
        self.names = set()

    def uid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, n=5):
        return "".join(self.rng.choice(ALNUM) for _ in range(n))

    def generated_name(self, prefix):
        """`prefix` and a generated suffix, drawn again while the name is taken (as the API
        server retries a generateName that collides): 60,000 DaemonSet pods of 10,000 nodes
        would otherwise repeat names."""
        while True:
            name = prefix + self.suffix()
            if name not in self.names:
                self.names.add(name)
                return name

    def resource_version(self):
        self.rv += self.rng.randint(1, 50)
        return str(self.rv)


def weighted(rng, table):
    """table: list of (value, weight)."""
    total = sum(w for _, w in table)
    x = rng.random() * total
    for v, w in table:
        x -= w
        if x < 0:
            return v
    return table[-1][0]


def make_node(g, i, kind, created):
    inst, product, gpu_mem, cpu, _ = NODE_TYPES[kind]
    name = f"gpu-{kind}-{i:04d}"
    zone = ZONES[i % len(ZONES)]
    ip = f"10.{(i >> 8) & 255}.{i & 255}.10"
    mem = f"{NODE_MEMORY_MI[kind]}Mi"
    cap_mem = f"{NODE_MEMORY_MI[kind] + 4000}Mi"
    cond_t = ts(created + dt.timedelta(minutes=2))
    hb = "2026-12-01T08:59:30Z"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": ts(created),
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": inst,
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": inst,
                "nvidia.com/cuda.driver.major": "550",
                "nvidia.com/gpu.count": str(GPUS_PER_NODE),
                "nvidia.com/gpu.family": "hopper",
                "nvidia.com/gpu.memory": str(gpu_mem),
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": product,
                "topology.kubernetes.io/region": "us-east-1",
                "topology.kubernetes.io/zone": zone,
            },
            "name": name,
            "resourceVersion": g.resource_version(),
            "uid": g.uid(),
        },
        "spec": {
            "podCIDR": f"100.{64 + (i >> 8) % 64}.{i & 255}.0/24",
            "providerID": f"aws:///{zone}/i-0{g.rng.getrandbits(64):016x}",
            "taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}],
        },
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": {
                "cpu": str(cpu),
                "ephemeral-storage": "1717986918400",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": mem,
                "nvidia.com/gpu": str(GPUS_PER_NODE),
                "pods": "110",
            },
            "capacity": {
                "cpu": str(NODE_CAPACITY_CPU[kind]),
                "ephemeral-storage": "1844674407370",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": cap_mem,
                "nvidia.com/gpu": str(GPUS_PER_NODE),
                "pods": "110",
            },
            "conditions": [
                {"lastHeartbeatTime": hb, "lastTransitionTime": cond_t,
                 "message": "kubelet has sufficient memory available",
                 "reason": "KubeletHasSufficientMemory", "status": "False", "type": "MemoryPressure"},
                {"lastHeartbeatTime": hb, "lastTransitionTime": cond_t,
                 "message": "kubelet has no disk pressure",
                 "reason": "KubeletHasNoDiskPressure", "status": "False", "type": "DiskPressure"},
                {"lastHeartbeatTime": hb, "lastTransitionTime": cond_t,
                 "message": "kubelet has sufficient PID available",
                 "reason": "KubeletHasSufficientPID", "status": "False", "type": "PIDPressure"},
                {"lastHeartbeatTime": hb, "lastTransitionTime": cond_t,
                 "message": "kubelet is posting ready status",
                 "reason": "KubeletReady", "status": "True", "type": "Ready"},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": g.uid(),
                "containerRuntimeVersion": "containerd://1.7.20",
                "kernelVersion": "6.8.0-1015-aws",
                "kubeProxyVersion": "v1.30.4",
                "kubeletVersion": "v1.30.4",
                "machineID": f"{g.rng.getrandbits(128):032x}",
                "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.4 LTS",
                "systemUUID": g.uid(),
            },
        },
    }


def container_status(g, name, image, started):
    return {
        "containerID": f"containerd://{g.rng.getrandbits(256):064x}",
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:{g.rng.getrandbits(256):064x}",
        "lastState": {},
        "name": name,
        "ready": True,
        "restartCount": 0,
        "started": True,
        "state": {"running": {"startedAt": ts(started)}},
    }


TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
     "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
     "tolerationSeconds": 300},
]


def make_pod(g, *, name, generate_name, namespace, labels, owner, image, container, resources,
             priority, priority_class, created, node=None, node_ip=None, phase, qos,
             unschedulable_msg=None, tolerations=None, service_account="default"):
    metadata = {
        "creationTimestamp": ts(created),
        "generateName": generate_name,
        "labels": labels,
        "name": name,
        "namespace": namespace,
        "ownerReferences": [owner],
        "resourceVersion": g.resource_version(),
        "uid": g.uid(),
    }
    spec = {
        "containers": [{
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "name": container,
            "resources": resources,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": priority,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": service_account,
        "serviceAccountName": service_account,
        "terminationGracePeriodSeconds": 30,
        "tolerations": (tolerations or []) + TOLERATIONS,
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node:
        spec["nodeName"] = node
    if phase == "Running":
        started = created + dt.timedelta(seconds=g.rng.randint(2, 40))
        status = {
            "conditions": [
                {"lastProbeTime": None, "lastTransitionTime": ts(started), "status": "True",
                 "type": t}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [container_status(g, container, image, started)],
            "hostIP": node_ip,
            "hostIPs": [{"ip": node_ip}],
            "phase": "Running",
            "podIP": f"100.{g.rng.randint(64, 127)}.{g.rng.randint(0, 255)}.{g.rng.randint(2, 254)}",
            "qosClass": qos,
            "startTime": ts(created + dt.timedelta(seconds=1)),
        }
        status["podIPs"] = [{"ip": status["podIP"]}]
    else:
        status = {
            "conditions": [{
                "lastProbeTime": None,
                "lastTransitionTime": ts(created + dt.timedelta(seconds=1)),
                "message": unschedulable_msg,
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }],
            "phase": "Pending",
            "qosClass": qos,
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec,
            "status": status}


def gpu_resources(gpus, cores):
    r = {"cpu": str(cores), "memory": f"{gpus * MEMORY_PER_GPU_GI}Gi", "nvidia.com/gpu": str(gpus)}
    return {"limits": dict(r), "requests": dict(r)}


GPU_TOLERATION = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]


def fill_sizes(rng, used):
    """Split `used` GPUs of one node into pods of 1, 2, 4 or 8 GPUs."""
    sizes = []
    left = used
    while left > 0:
        sizes.append(weighted(rng, [(s, w) for s, w in ((8, 3), (4, 3), (2, 3), (1, 2)) if s <= left]))
        left -= sizes[-1]
    return sizes


def generate(nodes, seed, fill, pending):
    g = Gen(seed)
    rng = g.rng
    items = []

    # Nodes: created over the cluster's first weeks.
    t_nodes = dt.datetime(2026, 10, 2, 8, 0, 0)
    node_rows = []  # (name, kind, ip)
    for i in range(1, nodes + 1):
        kind = "h100" if rng.random() < 0.6 else "h200"
        node = make_node(g, i, kind, t_nodes + dt.timedelta(minutes=5 * (i - 1)))
        items.append(node)
        node_rows.append((node["metadata"]["name"], kind, node["status"]["addresses"][0]["address"]))

    # Pod clock: strictly increasing creation times in generation order.
    clock = [t_nodes + dt.timedelta(minutes=5 * nodes + 1)]

    def tick(lo, hi):
        clock[0] += dt.timedelta(seconds=rng.randint(lo, hi))
        return clock[0]

    # DaemonSet pods, one of each DaemonSet per node, as nodes joined.
    ds_uids = {name: g.uid() for name, *_ in DAEMONSETS}
    ds_hash = {name: f"{rng.getrandbits(40):010x}" for name, *_ in DAEMONSETS}
    for node_name, _, ip in node_rows:
        for (ds, ns, image, cpu, mem, mem_limit, pclass, prio) in DAEMONSETS:
            res = {"requests": {"cpu": cpu, "memory": mem}}
            if mem_limit:
                res["limits"] = {"memory": mem_limit}
            items.append(make_pod(
                g, name=g.generated_name(f"{ds}-"), generate_name=f"{ds}-", namespace=ns,
                labels={"app.kubernetes.io/name": ds, "controller-revision-hash": ds_hash[ds],
                        "pod-template-generation": "1"},
                owner={"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                       "kind": "DaemonSet", "name": ds, "uid": ds_uids[ds]},
                image=image, container=ds.split("-daemonset")[0], resources=res,
                priority=prio, priority_class=pclass, created=tick(1, 20), node=node_name,
                node_ip=ip, phase="Running", qos="Burstable",
                tolerations=[{"operator": "Exists"}], service_account=ds))

    # Running GPU pods: per node, the GPUs to fill (free GPUs per node drawn so the cluster
    # is about `fill` full), split into pods; then all of them in a random creation order.
    total = nodes * GPUS_PER_NODE
    target_free = round(total * (1 - fill))
    free = [0] * nodes
    for _ in range(target_free):
        # add a free GPU to a random node that still has at least 4 in use
        while True:
            k = rng.randrange(nodes)
            if free[k] < 4:
                free[k] += 1
                break
    running = []  # (node index, gpus)
    for k in range(nodes):
        for s in fill_sizes(rng, GPUS_PER_NODE - free[k]):
            running.append((k, s))
    rng.shuffle(running)

    workloads = {}  # app -> dict(owner info)

    def owner_of(app, kind):
        w = workloads.get(app)
        if w is None or (kind == "batch" and w["left"] == 0):
            # a new Job (batch: a Job of a few pods) or the app's ReplicaSet (serving)
            w = {"hash": g.suffix(10), "uid": g.uid(),
                 "left": rng.randint(1, 8), "index": 0, "job": f"{app}-{g.suffix(5)}"}
            workloads[app] = w
        return w

    t_jobs = dt.datetime(2026, 11, 27, 0, 0, 0)
    if clock[0] < t_jobs:
        clock[0] = t_jobs
    for k, s in running:
        node_name, kind, ip = node_rows[k]
        cores = NODE_TYPES[kind][4] * s
        batch = rng.random() < 0.6
        created = tick(5, 90)
        if batch:
            app = rng.choice(BATCH_APPS[s])
            w = owner_of(app, "batch")
            w["left"] -= 1
            idx = w["index"]
            w["index"] += 1
            job = w["job"]
            items.append(make_pod(
                g, name=g.generated_name(f"{job}-{idx}-"), generate_name=f"{job}-{idx}-",
                namespace="train",
                labels={"app": app, "batch.kubernetes.io/controller-uid": w["uid"],
                        "batch.kubernetes.io/job-completion-index": str(idx),
                        "batch.kubernetes.io/job-name": job, "job-name": job},
                owner={"apiVersion": "batch/v1", "blockOwnerDeletion": True, "controller": True,
                       "kind": "Job", "name": job, "uid": w["uid"]},
                image="registry.example.com/train:2.4.1", container="trainer",
                resources=gpu_resources(s, cores), priority=100, priority_class="batch-low",
                created=created, node=node_name, node_ip=ip, phase="Running",
                qos="Guaranteed", tolerations=GPU_TOLERATION))
        else:
            app = rng.choice(SERVE_APPS[s])
            w = owner_of(app, "serve")
            rs = f"{app}-{w['hash']}"
            items.append(make_pod(
                g, name=g.generated_name(f"{rs}-"), generate_name=f"{rs}-", namespace="serve",
                labels={"app": app, "pod-template-hash": w["hash"]},
                owner={"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                       "kind": "ReplicaSet", "name": rs, "uid": w["uid"]},
                image="registry.example.com/serve:0.6.3", container="server",
                resources=gpu_resources(s, cores), priority=1000, priority_class="serving-high",
                created=created, node=node_name, node_ip=ip, phase="Running",
                qos="Guaranteed", tolerations=GPU_TOLERATION))

    # Pending pods: a scale-up of serving deployments, in bursts of the same shape.
    t_pending = dt.datetime(2026, 12, 1, 9, 0, 0)
    if clock[0] < t_pending:
        clock[0] = t_pending
    left = pending
    while left > 0:
        s = weighted(rng, [(1, 2), (2, 3), (4, 3), (8, 2)])
        pclass, prio = rng.choice(PENDING_CLASSES)
        app = PENDING_APPS[s] + ("" if prio == 1000 else f"-{pclass.split('-')[1]}")
        w = workloads.get(app)
        if w is None:
            w = {"hash": g.suffix(10), "uid": g.uid()}
            workloads[app] = w
        rs = f"{app}-{w['hash']}"
        burst = min(left, rng.randint(1, 6))
        for _ in range(burst):
            msg = (f"0/{nodes} nodes are available: {nodes} Insufficient nvidia.com/gpu. "
                   f"preemption: 0/{nodes} nodes are available: {nodes} No preemption victims "
                   "found for incoming pod.")
            items.append(make_pod(
                g, name=g.generated_name(f"{rs}-"), generate_name=f"{rs}-", namespace="serve",
                labels={"app": app, "pod-template-hash": w["hash"]},
                owner={"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                       "kind": "ReplicaSet", "name": rs, "uid": w["uid"]},
                image="registry.example.com/serve:0.6.3", container="server",
                resources=gpu_resources(s, NODE_TYPES["h100"][4] * s), priority=prio,
                priority_class=pclass, created=tick(1, 3), phase="Pending", qos="Guaranteed",
                unschedulable_msg=msg, tolerations=GPU_TOLERATION))
        left -= burst

    return {"apiVersion": "v1", "items": items, "kind": "List",
            "metadata": {"resourceVersion": ""}}



# --- Noise: what real exports carry besides what coplan reads -------------------------------
# Drawn from a second generator (seeded from --seed), so that the base cluster, its pods and
# their order are the same with and without --noise.

EXTRA_DAEMONSETS = [
    # (name, namespace, image, cpu request) — NFD's workers and a metrics agent
    ("nfd-worker", "node-feature-discovery", "registry.k8s.io/nfd/node-feature-discovery:v0.16.4", "5m"),
    ("nfd-topology-updater", "node-feature-discovery",
     "registry.k8s.io/nfd/node-feature-discovery:v0.16.4", "10m"),
    ("node-exporter", "monitoring", "quay.io/prometheus/node-exporter:v1.8.2", "50m"),
]
NUMA_ZONES = 2  # p5 / p5e: two sockets, one NUMA node each, four GPUs per socket


def fields_v1(value, depth=0):
    """A managedFields `fieldsV1` mirroring `value`'s keys, as the API server records them."""
    if not isinstance(value, dict) or depth > 6:
        return {}
    out = {".": {}} if depth else {}
    for k, v in value.items():
        if isinstance(v, list):
            out[f"f:{k}"] = {".": {}, **{f'k:{{"name":"{e.get("name", i)}"}}': fields_v1(e, depth + 2)
                                        for i, e in enumerate(v[:4]) if isinstance(e, dict)}}
        else:
            out[f"f:{k}"] = fields_v1(v, depth + 1)
    return out


def with_managed_fields(obj, manager, when):
    meta = obj["metadata"]
    entries = [{
        "apiVersion": obj["apiVersion"],
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": fields_v1({k: meta[k] for k in ("labels", "ownerReferences")
                                               if k in meta}),
                     "f:spec": fields_v1(obj.get("spec", {}))},
        "manager": manager,
        "operation": "Update",
        "time": when,
    }]
    if obj.get("status"):
        entries.append({
            "apiVersion": obj["apiVersion"],
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": fields_v1(obj["status"])},
            "manager": "kubelet",
            "operation": "Update",
            "subresource": "status",
            "time": when,
        })
    meta["managedFields"] = entries
    return obj


def add_pod_noise(nr, pod):
    """Scheduling constraints, a native sidecar and a runtime overhead on some pods."""
    spec = pod["spec"]
    gpus = int(spec["containers"][0]["resources"].get("requests", {}).get("nvidia.com/gpu", "0"))
    if gpus and nr.random() < 0.3:
        spec["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
    if gpus and nr.random() < 0.2:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "nvidia.com/gpu.product", "operator": "In",
                "values": ["NVIDIA-H100-80GB-HBM3", "NVIDIA-H200"]}]}]}}}
    if gpus and nr.random() < 0.25:
        # A native sidecar (KEP-753): an init container that keeps running.
        spec["initContainers"] = [{
            "image": "registry.example.com/log-shipper:1.4.0", "name": "log-shipper",
            "restartPolicy": "Always",
            "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        }]
    if gpus and nr.random() < 0.1:
        spec["runtimeClassName"] = "nvidia"
        spec["overhead"] = {"cpu": "250m", "memory": "120Mi"}
    return pod


def cordon(node):
    node["spec"]["unschedulable"] = True
    node["spec"]["taints"] = node["spec"].get("taints", []) + [{
        "effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable",
        "timeAdded": "2026-12-01T08:30:00Z"}]
    return node


def nrt_object(node, pods):
    """The NodeResourceTopology NFD's topology-updater publishes for `node`, its `available`
    figures those of `pods` (the node's Guaranteed pods) put on NUMA zones greedily."""
    name = node["metadata"]["name"]
    cap_cpu = int(node["status"]["capacity"]["cpu"])
    alloc_cpu = int(node["status"]["allocatable"]["cpu"])
    per_zone = cap_cpu // NUMA_ZONES
    gpus_per_zone = GPUS_PER_NODE // NUMA_ZONES
    zone_alloc = [per_zone - (cap_cpu - alloc_cpu) if z == 0 else per_zone for z in range(NUMA_ZONES)]
    used_cpu = [0] * NUMA_ZONES
    used_gpu = [0] * NUMA_ZONES
    for gpus, cores in pods:
        fits = [z for z in range(NUMA_ZONES)
                if used_gpu[z] + gpus <= gpus_per_zone and used_cpu[z] + cores <= zone_alloc[z]]
        if fits:
            z = min(fits, key=lambda z: (gpus_per_zone - used_gpu[z] - gpus, z))
            used_gpu[z] += gpus
            used_cpu[z] += cores
        else:  # spans the zones, as an 8-GPU pod does
            for z in range(NUMA_ZONES):
                used_gpu[z] += gpus // NUMA_ZONES
                used_cpu[z] += cores // NUMA_ZONES
    zones = []
    for z in range(NUMA_ZONES):
        zones.append({
            "costs": [{"name": f"node-{o}", "value": 10 if o == z else 21} for o in range(NUMA_ZONES)],
            "name": f"node-{z}",
            "resources": [
                {"allocatable": str(zone_alloc[z]), "available": str(max(0, zone_alloc[z] - used_cpu[z])),
                 "capacity": str(per_zone), "name": "cpu"},
                {"allocatable": "1031865Mi", "available": "1031865Mi", "capacity": "1031865Mi",
                 "name": "memory"},
                {"allocatable": str(gpus_per_zone),
                 "available": str(max(0, gpus_per_zone - used_gpu[z])),
                 "capacity": str(gpus_per_zone), "name": "nvidia.com/gpu"},
            ],
            "type": "Node",
        })
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                       {"name": "topologyManagerScope", "value": "container"}],
        "kind": "NodeResourceTopology",
        "metadata": {"creationTimestamp": node["metadata"]["creationTimestamp"], "name": name,
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Namespace",
                                          "name": "node-feature-discovery",
                                          "uid": "5d5c6b5e-1c0a-4c89-9a34-0a6f1b1d4a10"}],
                     "resourceVersion": "1", "uid": node["metadata"]["uid"]},
        "topologyPolicies": ["SingleNUMANodeContainerLevel"],
        "zones": zones,
    }


def pdb(app, namespace, min_available, healthy):
    """A PodDisruptionBudget over the pods labelled `app`, with the status its controller
    writes when `healthy` of them run."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": f"{app}-pdb", "namespace": namespace},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": app}}},
            "status": {"currentHealthy": healthy, "desiredHealthy": min_available,
                       "disruptionsAllowed": max(0, healthy - min_available),
                       "expectedPods": healthy, "observedGeneration": 1}}


def with_noise(items, seed, pods_per_node):
    """The base items with noise, then the extra objects (NRT objects, PDBs, the extra
    DaemonSets' pods, and finished and BestEffort pods up to --pods-per-node), one by one."""
    nr = random.Random(seed * 7919 + 17)
    g = Gen(seed * 7919 + 18)
    nodes = [it for it in items if it["kind"] == "Node"]
    node_pods = {n["metadata"]["name"]: [] for n in nodes}
    pod_count = 0
    running_apps = {}
    cordoned = nodes[min(2, len(nodes) - 1)]["metadata"]["name"]
    for it in items:
        if it["kind"] == "Node":
            if it["metadata"]["name"] == cordoned:
                cordon(it)
            yield with_managed_fields(it, "kubelet", it["metadata"]["creationTimestamp"])
            continue
        pod_count += 1
        app = it["metadata"].get("labels", {}).get("app")
        if app and it["status"].get("phase") == "Running":
            running_apps[(it["metadata"]["namespace"], app)] = \
                running_apps.get((it["metadata"]["namespace"], app), 0) + 1
        res = it["spec"]["containers"][0]["resources"]
        node = it["spec"].get("nodeName")
        if node and it["status"].get("qosClass") == "Guaranteed":
            node_pods[node].append((int(res["requests"].get("nvidia.com/gpu", "0")),
                                    int(res["requests"]["cpu"])))
        yield with_managed_fields(add_pod_noise(nr, it), "kube-controller-manager",
                                  it["metadata"]["creationTimestamp"])
    for n in nodes:
        yield nrt_object(n, node_pods[n["metadata"]["name"]])
    for app, ns, m in [("chat-8b", "serve", 2), ("chat-70b", "serve", 1), ("chat-405b", "serve", 1),
                       ("assist-70b", "serve", 1), ("llm-pretrain", "train", 0)]:
        yield pdb(app, ns, m, running_apps.get((ns, app), 0))
    clock = dt.datetime(2026, 12, 1, 10, 0, 0)
    for k, n in enumerate(nodes):
        name = n["metadata"]["name"]
        ip = n["status"]["addresses"][0]["address"]
        for ds, ns, image, cpu in EXTRA_DAEMONSETS:
            clock += dt.timedelta(seconds=1)
            pod_count += 1
            yield with_managed_fields(make_pod(
                g, name=g.generated_name(f"{ds}-"), generate_name=f"{ds}-", namespace=ns,
                labels={"app.kubernetes.io/name": ds, "pod-template-generation": "1"},
                owner={"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                       "kind": "DaemonSet", "name": ds, "uid": f"00000000-0000-4000-8000-{k % 997:012d}"},
                image=image, container=ds, resources={"requests": {"cpu": cpu, "memory": "64Mi"}},
                priority=2000001000, priority_class="system-node-critical", created=clock, node=name,
                node_ip=ip, phase="Running", qos="Burstable", tolerations=[{"operator": "Exists"}],
                service_account=ds), "kube-controller-manager", ts(clock))
    filler = max(0, pods_per_node * len(nodes) - pod_count) if pods_per_node else 0
    for i in range(filler):
        n = nodes[i % len(nodes)]
        name = n["metadata"]["name"]
        clock += dt.timedelta(milliseconds=200)
        kind = nr.random()
        if kind < 0.7:  # a finished Job pod, kept until its TTL
            phase, job, res, qos = "Succeeded", f"eval-{i // 8:06d}", {
                "limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": "2", "memory": "4Gi"}}, "Guaranteed"
        elif kind < 0.8:
            phase, job, res, qos = "Failed", f"eval-{i // 8:06d}", {
                "requests": {"cpu": "1", "memory": "2Gi"}}, "Burstable"
        else:  # a debugging pod without requests: nothing coplan allocates
            phase, job, res, qos = "Running", f"debug-{i:06d}", {}, "BestEffort"
        pod = make_pod(
            g, name=g.generated_name(f"{job}-"), generate_name=f"{job}-", namespace="batch",
            labels={"job-name": job}, owner={"apiVersion": "batch/v1", "controller": True,
                                             "kind": "Job", "name": job, "uid": g.uid()},
            image="registry.example.com/eval:0.3.1", container="main", resources=res,
            priority=0, priority_class=None, created=clock, node=name, node_ip=n["status"]["addresses"][0]["address"],
            phase="Running", qos=qos)
        pod["status"]["phase"] = phase
        if phase != "Running":
            for c in pod["status"]["containerStatuses"]:
                c["state"] = {"terminated": {"exitCode": 0 if phase == "Succeeded" else 1,
                                             "reason": "Completed" if phase == "Succeeded" else "Error",
                                             "finishedAt": ts(clock + dt.timedelta(minutes=5))}}
        yield with_managed_fields(pod, "kube-controller-manager", ts(clock))


# --- Writers --------------------------------------------------------------------------------

_PLAIN_FIRST = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/.")
_YAML_SPECIAL_WORDS = {"", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False",
                       "FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off",
                       "Off", "OFF", "y", "Y", "n", "N"}


def _needs_quotes(text):
    if text in _YAML_SPECIAL_WORDS or text[0] not in _PLAIN_FIRST or text[-1] == " ":
        return True
    if ": " in text or " #" in text or text.endswith(":") or "\n" in text or '"' in text \
            or "\\" in text or "\t" in text or "'" in text:
        return True
    if text[0] in "0123456789.+-" or text.startswith("0x"):
        try:  # numbers, and kubectl's quoted timestamps
            float(text)
            return True
        except ValueError:
            return text[:4].isdigit() and "-" in text
    return False


def yaml_scalar(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    return json.dumps(v) if _needs_quotes(v) else v


def yaml_lines(value, indent, out):
    """Block YAML as kubectl writes it: two spaces a level, list items at their key's indent."""
    pad = " " * indent
    if isinstance(value, dict):
        for k, v in value.items():
            key = yaml_scalar(k)
            if isinstance(v, dict) and v:
                out.append(f"{pad}{key}:")
                yaml_lines(v, indent + 2, out)
            elif isinstance(v, list) and v:
                out.append(f"{pad}{key}:")
                yaml_lines(v, indent, out)
            elif isinstance(v, dict):
                out.append(f"{pad}{key}: {{}}")
            elif isinstance(v, list):
                out.append(f"{pad}{key}: []")
            else:
                out.append(f"{pad}{key}: {yaml_scalar(v)}")
    else:  # a non-empty list
        for v in value:
            if isinstance(v, dict) and v:
                sub = []
                yaml_lines(v, indent + 2, sub)
                sub[0] = f"{pad}- {sub[0][indent + 2:]}"
                out.extend(sub)
            elif isinstance(v, list) and v:
                sub = []
                yaml_lines(v, indent + 2, sub)
                sub[0] = f"{pad}- {sub[0][indent + 2:]}"
                out.extend(sub)
            elif isinstance(v, (dict, list)):
                out.append(f"{pad}- {'{}' if isinstance(v, dict) else '[]'}")
            else:
                out.append(f"{pad}- {yaml_scalar(v)}")


# --- DRA: the same cluster as a DRA driver publishes it ------------------------------------
# GPUs leave `status.allocatable`; each node's ResourceSlice lists them with their NUMA node
# and PCIe root; each running GPU pod holds its GPUs through an allocated ResourceClaim
# (stamped from a template, as `status.resourceClaimStatuses` names it); each pending pod asks
# through a claim template, with `matchAttribute: numaNode` up to 4 GPUs.

DRA_DRIVER = "gpu.nvidia.com"


def to_dra(items):
    out, slices, claims = [], [], []
    free = {}  # node -> free device indices
    for it in items:
        if it["kind"] != "Node":
            continue
        name = it["metadata"]["name"]
        labels = it["metadata"]["labels"]
        for section in ("allocatable", "capacity"):
            it["status"][section].pop("nvidia.com/gpu", None)
        free[name] = list(range(GPUS_PER_NODE))
        per_numa = GPUS_PER_NODE // NUMA_ZONES
        slices.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-{DRA_DRIVER}-x7k2p"},
            "spec": {"driver": DRA_DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{
                         "name": f"gpu-{d}",
                         "attributes": {
                             "type": {"string": "gpu"},
                             "productName": {"string": labels["nvidia.com/gpu.product"]},
                             "resource.kubernetes.io/numaNode": {"int": d // per_numa},
                             "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{d // 2:02x}"},
                         },
                         "capacity": {"memory": {"value": f"{labels['nvidia.com/gpu.memory']}Mi"}},
                     } for d in range(GPUS_PER_NODE)]},
        })
    per_numa = GPUS_PER_NODE // NUMA_ZONES
    templates = set()
    for it in items:
        if it["kind"] != "Pod":
            out.append(it)
            continue
        res = it["spec"]["containers"][0]["resources"]
        n = int(res.get("requests", {}).get("nvidia.com/gpu", 0))
        if n == 0:
            out.append(it)
            continue
        for part in ("requests", "limits"):
            res.get(part, {}).pop("nvidia.com/gpu", None)
        aligned = n <= per_numa
        tmpl = f"gpus-{n}" + ("-one-numa" if aligned else "")
        templates.add((it["metadata"]["namespace"], tmpl, n, aligned))
        it["spec"]["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": tmpl}]
        it["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]
        node = it["spec"].get("nodeName")
        if node and it["status"]["phase"] == "Running":
            # The allocator's choice: one NUMA node when one holds them, else the lowest ids.
            f = free[node]
            pick = None
            if aligned:
                for z in range(NUMA_ZONES):
                    zone = [d for d in f if d // per_numa == z]
                    if len(zone) >= n:
                        pick = zone[:n]
                        break
            pick = pick or f[:n]
            for d in pick:
                f.remove(d)
            claim = f"{it['metadata']['name']}-gpus-{len(claims):05x}"
            it["status"]["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": claim}]
            claims.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": claim, "namespace": it["metadata"]["namespace"]},
                "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": DRA_DRIVER, "count": n}}]}},
                "status": {
                    "allocation": {"devices": {"results": [
                        {"request": "gpus", "driver": DRA_DRIVER, "pool": node,
                         "device": f"gpu-{d}"} for d in pick]}},
                    "reservedFor": [{"resource": "pods", "name": it["metadata"]["name"],
                                     "uid": it["metadata"]["uid"]}],
                },
            })
        out.append(it)
    nodes = [it for it in out if it["kind"] == "Node"]
    rest = [it for it in out if it["kind"] != "Node"]
    dclass = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
              "metadata": {"name": DRA_DRIVER},
              "spec": {"selectors": [{"cel": {"expression":
                  f'device.driver == "{DRA_DRIVER}" && device.attributes["{DRA_DRIVER}"].type == "gpu"'}}]}}
    tmpl_objs = []
    for ns, tmpl, n, aligned in sorted(templates):
        devices = {"requests": [{"name": "gpus", "exactly": {"deviceClassName": DRA_DRIVER,
                                                             "count": n}}]}
        if aligned:
            devices["constraints"] = [{"requests": ["gpus"],
                                       "matchAttribute": "resource.kubernetes.io/numaNode"}]
        tmpl_objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                          "metadata": {"name": tmpl, "namespace": ns},
                          "spec": {"spec": {"devices": devices}}})
    return nodes + slices + [dclass] + tmpl_objs + rest + claims


def write_list(f, items, fmt):
    """One `kind: List` of `items`, written item by item."""
    if fmt == "yaml":
        f.write("apiVersion: v1\nitems:\n")
        for it in items:
            out = []
            yaml_lines([it], 0, out)
            f.write("\n".join(out))
            f.write("\n")
        f.write("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
    else:
        f.write('{\n    "apiVersion": "v1",\n    "items": [')
        first = True
        for it in items:
            text = json.dumps(it, indent=4)
            f.write(("\n" if first else ",\n") + "\n".join("        " + line for line in text.split("\n")))
            first = False
        f.write(('\n    ' if not first else '') + '],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, required=True, help="GPU nodes (8 GPUs each)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fill", type=float, default=0.95,
                    help="share of the GPUs held by running pods (default 0.95)")
    ap.add_argument("--pending", type=int, default=None,
                    help="Pending pods (default: nodes / 4, at least 1)")
    ap.add_argument("--split", type=int, default=0, metavar="K",
                    help="write a multi-document stream ('---'-separated JSON Lists of at most K "
                         "items each) instead of one List; a workaround for importers that cap "
                         "the size of one document (default 0: one List, as kubectl writes)")
    ap.add_argument("--format", choices=["json", "yaml", "jsonl"], default="json",
                    help="json: `kubectl get … -o json` (default); yaml: `-o yaml`; jsonl: one "
                         "compact object per line (JSON Lines)")
    ap.add_argument("--noise", action="store_true",
                    help="add what real exports carry besides what coplan reads: managedFields, "
                         "NodeResourceTopology objects as NFD publishes them, more DaemonSets, "
                         "native sidecars, a cordoned node, nodeSelector and required "
                         "nodeAffinity, runtime overhead, PodDisruptionBudgets")
    ap.add_argument("--pods-per-node", type=int, default=0, metavar="P",
                    help="with --noise: add finished Job pods and BestEffort pods until the "
                         "snapshot holds about P pods per node (e.g. 20: 10,000 nodes, 200,000 pods)")
    ap.add_argument("--dra", action="store_true",
                    help="publish the GPUs as a DRA driver does (resource.k8s.io/v1): "
                         "ResourceSlices with NUMA and PCIe-root attributes, a DeviceClass, "
                         "allocated ResourceClaims for the running GPU pods, claim templates "
                         "(numaNode-aligned up to 4 GPUs) for the pending ones")
    ap.add_argument("--out", help="write here instead of stdout")
    a = ap.parse_args()
    if a.nodes < 1:
        ap.error("--nodes must be at least 1")
    if not 0.5 <= a.fill <= 1.0:
        ap.error("--fill must be within [0.5, 1]")
    if a.pods_per_node and not a.noise:
        ap.error("--pods-per-node needs --noise")
    if a.dra and a.noise:
        ap.error("--dra and --noise are not combined (the noise's NRT objects count nvidia.com/gpu)")
    pending = a.pending if a.pending is not None else max(1, round(a.nodes / 4))
    doc = generate(a.nodes, a.seed, a.fill, pending)
    items = doc["items"]
    if a.dra:
        items = to_dra(items)
        doc = dict(doc, items=items)
    f = open(a.out, "w") if a.out else sys.stdout
    if not a.noise and a.format == "json":
        # Exactly what earlier versions wrote (scripts and figures depend on it).
        if a.split > 0:
            text = "".join(
                "---\n" + json.dumps(dict(doc, items=items[i:i + a.split]), indent=4) + "\n"
                for i in range(0, len(items), a.split))
        else:
            text = json.dumps(doc, indent=4) + "\n"
        f.write(text)
    else:
        stream = with_noise(items, a.seed, a.pods_per_node) if a.noise else iter(items)
        if a.format == "jsonl":
            for it in stream:
                f.write(json.dumps(it, separators=(",", ":")))
                f.write("\n")
        elif a.split > 0:
            chunk = []
            for it in stream:
                chunk.append(it)
                if len(chunk) == a.split:
                    f.write("---\n")
                    write_list(f, chunk, a.format)
                    chunk = []
            if chunk:
                f.write("---\n")
                write_list(f, chunk, a.format)
        else:
            write_list(f, stream, a.format)
    if a.out:
        f.close()


if __name__ == "__main__":
    main()
