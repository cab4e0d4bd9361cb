//! Devices from Kubernetes snapshots: DRA slices and claims, the CPU driver, MIG, AMD and
//! named GPU resources.

use super::*;

/// Imports a fixture of `tests/fixtures/import/devices/` into a scratch folder: the paths of
/// the written cluster and workload, and the summary.
fn import_devices(fixture: &str, extra: &[&str]) -> (String, String, String) {
    let dir = scratch(&format!("devices-{}", fixture.replace('.', "-")));
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let input = format!("tests/fixtures/import/devices/{fixture}.yaml");
    let mut args = vec![input.as_str()];
    args.extend(extra);
    let (code, _, err) = import_k8s(&args, &c, &w);
    assert_eq!(code, 0, "{fixture}: {err}");
    (c, w, err)
}

#[test]
fn every_device_fixture_imports_plans_and_matches_its_snapshot() {
    for fixture in [
        "dra-v1",
        "dra-v1beta1",
        "dra-v1beta2",
        "dra-cpu-driver",
        "dra-not-modelled",
        "mig-mixed",
        "mig-single",
        "amd",
    ] {
        let text = import_and_plan(
            &format!("devices-snap-{fixture}"),
            &[
                "import",
                "k8s",
                &format!("tests/fixtures/import/devices/{fixture}.yaml"),
            ],
        );
        snapshot(&format!("import__devices-{fixture}"), &text);
    }
}

#[test]
fn dra_slices_give_gpus_their_numa_nodes_and_claims_say_who_holds_which() {
    let (c, w, summary) = import_devices("dra-v1", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    // Not a node of 0 GPUs: the slice's 8 devices, on the NUMA nodes its attributes name;
    // the stale generation (all on NUMA 0) is dropped.
    assert!(
        cluster.contains("gpu_numa = [0, 0, 0, 0, 1, 1, 1, 1]"),
        "{cluster}"
    );
    assert!(cluster.contains("gpu_resource = \"gpu.nvidia.com\""));
    assert!(cluster.contains("gpu_memory_mib = 81920"));
    assert!(summary.contains("dra_resource_slices_of_an_older_pool_generation  1"));
    let workload = std::fs::read_to_string(&w).expect("workload");
    // Exactly the allocated devices, not a re-placement.
    assert!(workload.contains("name = \"ml/batch-x\"\nworkload = \"p5-3xgpu-nvidia-com-2c\"\nnode = \"h100-a\"\ngpus = [0, 1, 2]"), "{workload}");
    assert!(workload.contains("device_alignment = \"numa\""));
    // Priority-only eviction (kube-scheduler's reprieve, as KEP-5690 would run it) frees
    // NUMA 1 by the two priority-20 pods; the optimum frees NUMA 0 by the priority-5 and
    // priority-30 pods, which only the slices' NUMA attributes tell apart.
    let victims = victims_by_planner(&c, &w);
    let of = |name: &str| {
        victims
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert_eq!(of("k8s-default"), "ml/batch-z ml/batch-y");
    assert_eq!(of("ilp"), "ml/batch-w ml/batch-x");
    assert_eq!(of("ilp-batch"), "ml/batch-w ml/batch-x");
    assert_eq!(of("flextopo-imp"), "ml/batch-w ml/batch-x");
    // Every API version reads to the same specs.
    for version in ["dra-v1beta1", "dra-v1beta2"] {
        let (c2, w2, _) = import_devices(version, &[]);
        let body = |p: &str| {
            std::fs::read_to_string(p)
                .expect("written")
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with("name = \"k8s"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(body(&c), body(&c2), "{version}");
        assert_eq!(body(&w), body(&w2), "{version}");
    }
}

#[test]
fn what_dra_publishes_and_coplan_does_not_model_is_a_warning_naming_the_object() {
    let (_, _, summary) = import_devices("dra-not-modelled", &[]);
    for line in [
        "DRA shared counters (partitionable devices): 1 object(s): h100-a-gpu.nvidia.com-abcde",
        "DRA device taints: 1 object(s): h100-a-gpu.nvidia.com-abcde/gpu-0",
        "DRA admin access (monitors devices, holds none): 1 object(s): ml/batch-x-gpus",
    ] {
        assert!(
            summary.contains(&format!(
                "warning: not modelled, affects scheduling: {line}"
            )),
            "{summary}"
        );
    }
}

#[test]
fn the_cpu_driver_gives_numa_nodes_their_cores_and_claims_align_both() {
    let (c, w, _) = import_devices("dra-cpu-driver", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    assert!(
        cluster.contains("sockets = 2\nnuma_per_socket = 1\ncores_per_numa = 32"),
        "{cluster}"
    );
    let workload = std::fs::read_to_string(&w).expect("workload");
    assert!(
        workload.contains("device_alignment = \"numa-with-cores\""),
        "{workload}"
    );
    // The running pod's 24 cores are on NUMA 0, beside its GPU.
    let spec: coplan::spec::PreemptionSpec = toml::from_str(&workload).expect("a workload");
    let run = &spec.running[0];
    assert_eq!(
        run.cores,
        Some(coplan::spec::preemption::IdsOrCount::Ids((0..24).collect()))
    );
    assert_eq!(spec.workload[0].cores, 16);
}

#[test]
fn mig_slices_are_devices_of_their_own_kind_never_whole_gpus() {
    let (c, w, summary) = import_devices("mig-single", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    // 56 slices of 1/7 GPU: 8 GPUs' worth, no whole GPU on the MIG node.
    assert!(
        summary.contains("devices.nvidia.com/mig-1g.5gb (device-plugin)  56"),
        "{summary}"
    );
    assert!(
        summary.contains("devices.gpu (device-plugin)                    8"),
        "{summary}"
    );
    assert!(
        cluster.contains("kind = \"nvidia.com/mig-1g.5gb\""),
        "{cluster}"
    );
    assert!(
        cluster.contains("gpu_fraction = 0.14285714285714285"),
        "{cluster}"
    );
    let workload = std::fs::read_to_string(&w).expect("workload");
    // The pending pod that selects the MIG product asks for a slice; the other for GPUs.
    let spec: coplan::spec::PreemptionSpec = toml::from_str(&workload).expect("a workload");
    let kind_of = |pod: &str| {
        let entry = spec
            .preempt
            .iter()
            .find(|p| p.name.as_deref() == Some(pod))
            .expect(pod);
        let class = spec
            .workload
            .iter()
            .find(|k| k.name == entry.workload)
            .expect("class");
        class.gpu_kind().to_string()
    };
    assert_eq!(kind_of("default/slice-new"), "nvidia.com/mig-1g.5gb");
    assert_eq!(kind_of("default/whole-new"), "gpu");
    let victims = victims_by_planner(&c, &w);
    assert!(
        victims.iter().all(|(_, v)| v.contains("slice-")),
        "{victims:?}"
    );

    let (c, w, summary) = import_devices("mig-mixed", &[]);
    assert!(
        summary.contains("devices.nvidia.com/mig-3g.40gb (device-plugin)  2"),
        "{summary}"
    );
    // Only the 3g pod frees a 3g slice: the free 1g slices are another kind.
    for (planner, v) in victims_by_planner(&c, &w) {
        assert_eq!(v, "default/medium-0", "{planner}");
    }
}

#[test]
fn amd_gpus_and_named_resources_are_devices_of_their_kind() {
    let (c, w, _) = import_devices("amd", &[]);
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    assert!(
        cluster.contains("gpu_resource = \"amd.com/gpu\""),
        "{cluster}"
    );
    assert!(
        cluster.contains("gpu_model = \"AMD_Instinct_MI300X_OAM\""),
        "{cluster}"
    );
    let workload = std::fs::read_to_string(&w).expect("workload");
    assert!(workload.contains("gpus = [0, 1]"), "{workload}");
    for (planner, v) in victims_by_planner(&c, &w) {
        assert_eq!(v.split(' ').count(), 2, "{planner}: {v}");
    }
    // A resource coplan does not know is no device until `--gpu-resource` names it.
    let dir = scratch("gaudi");
    let input = dir.join("gaudi.yaml");
    let text = std::fs::read_to_string(root().join("tests/fixtures/import/devices/amd.yaml"))
        .expect("fixture")
        .replace("amd.com/gpu:", "habana.ai/gaudi:");
    std::fs::write(&input, text).expect("written");
    let (c, w) = (path_str(&dir.join("c.toml")), path_str(&dir.join("w.toml")));
    let (code, _, err) = import_k8s(
        &[
            &path_str(&input),
            "--gpu-resource",
            "habana.ai/gaudi",
            "--pool-label",
            "amd.com/gpu.product-name",
        ],
        &c,
        &w,
    );
    assert_eq!(code, 0, "{err}");
    let cluster = std::fs::read_to_string(&c).expect("cluster");
    assert!(
        cluster.contains("gpu_resource = \"habana.ai/gaudi\""),
        "{cluster}"
    );
    // The pool is named after the label's value, for `capacity --pool`.
    assert!(
        cluster.contains("name_prefix = \"amd-instinct-mi300x-oam-\""),
        "{cluster}"
    );
    let (code, out, err) = run(&[
        "capacity",
        &c,
        &w,
        "--pool",
        "amd-instinct-mi300x-oam-",
        "--target",
        "unplaced<=0",
    ]);
    assert_eq!(code, 0, "{err}\n{out}");
}
