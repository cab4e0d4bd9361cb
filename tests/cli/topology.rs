//! `coplan topology` of a cluster with levels above the server (DESIGN §12.3): the levels and
//! their domains in every format, each against its snapshot (`topology__<cluster>__<format>`),
//! and the outputs of a cluster without levels left as they were.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::{run_strs, snapshot, transcript};

const RACKS: &str = "examples/clusters/h100-racks.toml";
const FLAT: &str = "examples/clusters/gpu-2s4n8g-x4.toml";

fn stdout_of(args: &[&str]) -> String {
    let (code, out, err) = run_strs(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn topology_of_a_cluster_with_levels_in_every_format() {
    for format in ["table", "json", "dot", "svg"] {
        let args: Vec<String> = ["topology", RACKS, "--format", format]
            .into_iter()
            .map(String::from)
            .collect();
        let (code, text) = transcript(&args);
        assert_eq!(code, 0, "{text}");
        snapshot(&format!("topology__h100-racks__{format}"), &text);
    }
}

#[test]
fn the_table_lists_levels_domains_and_each_servers_place() {
    let table = stdout_of(&["topology", RACKS]);
    assert!(table.contains("levels, outermost first: cluster > block > rack > host"));
    assert!(table.contains("block b2: 8 servers, 64 GPUs"));
    assert!(table.contains("  rack b2-r1: 4 servers, 32 GPUs: b2-r1-h0 b2-r1-h1"));
    let row = table.lines().find(|l| l.starts_with("b2-r1-h3 "));
    let cells: Vec<&str> = row.map_or(vec![], |r| r.split_whitespace().collect());
    assert_eq!(cells.get(2..4), Some(&["b2", "b2-r1"][..]), "{table}");
    let flat = stdout_of(&["topology", FLAT]);
    assert!(!flat.contains("levels"), "{flat}");
}

#[test]
fn the_json_adds_levels_only_where_the_cluster_has_them() {
    let text = stdout_of(&["topology", RACKS, "--format", "json"]);
    let v: Value = serde_json::from_str(&text).expect("topology JSON parses");
    let names: Vec<&str> = (v["levels"].as_array().expect("levels listed").iter())
        .filter_map(|l| l["name"].as_str())
        .collect();
    assert_eq!(names, ["cluster", "block", "rack", "host"]);
    let rack = &v["levels"][2];
    assert_eq!(rack["penalty"], 1.05);
    assert_eq!(rack["domains"].as_array().map(Vec::len), Some(4));
    assert_eq!(rack["domains"][3]["name"], "b2-r2");
    assert_eq!(rack["domains"][3]["parent"], "b2");
    assert_eq!(rack["domains"][3]["gpus"], 32);
    assert_eq!(rack["domains"][3]["servers"][0], "b2-r2-h0");
    assert_eq!(v["levels"][3]["domains"][15]["parent"], "b2-r2");
    assert_eq!(v["levels"][0]["domains"][0]["parent"], Value::Null);
    assert_eq!(v["servers"].as_array().map(Vec::len), Some(16));
    let flat = stdout_of(&["topology", FLAT, "--format", "json"]);
    let flat: Value = serde_json::from_str(&flat).expect("topology JSON parses");
    assert!(
        flat.get("levels").is_none(),
        "no levels key without [topology]"
    );
}

#[test]
fn the_dot_nests_hosts_in_their_racks_in_their_blocks() {
    let dot = stdout_of(&["topology", RACKS, "--format", "dot"]);
    let block = dot.find("  subgraph cluster_l1_d1 {\n    label=\"block b2\";");
    let rack = dot.find("    subgraph cluster_l2_d3 {\n      label=\"rack b2-r2\";");
    let host = dot.find("      subgraph cluster_s15 {\n        label=\"b2-r2-h3 (h100-8g)\";");
    assert!(
        matches!((block, rack, host), (Some(b), Some(r), Some(h)) if b < r && r < h),
        "block ⊃ rack ⊃ host"
    );
    let opens = dot.matches('{').count();
    assert_eq!(opens, dot.matches('}').count(), "balanced braces");
    // 1 graph, 2 blocks, 4 racks, 16 hosts.
    assert_eq!(dot.matches("subgraph cluster_").count(), 22);
    let flat = stdout_of(&["topology", FLAT, "--format", "dot"]);
    assert!(
        !flat.contains("cluster_l"),
        "no domain subgraphs without levels"
    );
}

/// A cluster of `blocks` × `racks` × `hosts` 8-GPU servers, written to a scratch file.
fn generated_racks(blocks: usize, racks: usize, hosts: usize) -> PathBuf {
    let mut text = String::from(
        "kind = \"cluster\"\nname = \"racks-generated\"\n\n[topology]\nlevels = [\"block\", \"rack\"]\n\n\
         [[server_type]]\nname = \"g8\"\ngpu_model = \"H100\"\ngpu_memory_mib = 81559\nsockets = 1\n\
         numa_per_socket = 1\ncores_per_numa = 4\ngpu_numa = [0, 0, 0, 0, 0, 0, 0, 0]\n",
    );
    for b in 0..blocks {
        for r in 0..racks {
            text.push_str(&format!(
                "\n[[pool]]\nserver_type = \"g8\"\ncount = {hosts}\nname_prefix = \"b{b}-r{r}-h\"\n\
                 domain = {{ block = \"b{b}\", rack = \"b{b}-r{r}\" }}\n"
            ));
        }
    }
    let dir = std::env::temp_dir().join(format!("coplan-topology-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let path = dir.join(format!("racks-{blocks}x{racks}x{hosts}.toml"));
    std::fs::write(&path, text).expect("scratch cluster written");
    path
}

#[test]
fn a_thousand_hosts_stay_on_one_readable_page() {
    let path = generated_racks(5, 25, 8);
    let path = path.to_string_lossy();
    let svg = stdout_of(&["topology", &path, "--format", "svg"]);
    let again = stdout_of(&["topology", &path, "--format", "svg"]);
    assert!(svg == again, "two renders differ");
    let size: Vec<i32> = svg
        .split('"')
        .skip(1)
        .step_by(2)
        .take(2)
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        matches!(size[..], [w, h] if w <= 1300 && h <= 1400),
        "page size {size:?}"
    );
    // Every host is a tile showing its GPU count, every rack and block a labelled box.
    assert_eq!(svg.matches("\n8\n</text>").count(), 1000);
    assert!(svg.contains("block b4: 200 hosts, 1600 GPUs"));
    assert!(svg.contains("rack b4-r24"));
    let table = stdout_of(&["topology", &path]);
    assert!(
        table.contains("  rack b4-r24: 8 servers, 64 GPUs\n"),
        "counts only"
    );
    assert!(table.contains("servers by count above 64 servers"));
}
