//! `coplan profile fit`, `import vidur-profile` and `import azure-llm` on small traces.

use crate::support::{run, run_strs};

#[test]
fn profile_fit_reports_r2_and_the_model_section() {
    let (code, out, err) = run(&[
        "profile".into(),
        "fit".into(),
        "examples/profiles/llama-3-8b-a100-2-stages.csv".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[model]") && out.contains("eta_forward = ") && out.contains("R² = "));
    // Measured layers are linear in the tokens with a per-pass overhead: the extended form wins.
    assert!(
        out.contains("forward: F-test of the extended against the paper form")
            && out.contains("the data support the extended form")
            && out.contains("delta_forward_s = ")
            && out.contains("beta_forward = "),
        "{out}"
    );
    let r2 = |prefix: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} in {out}"));
        let after = line.split("R² = ").nth(1).unwrap_or_default();
        after
            .split(',')
            .next()
            .unwrap_or_default()
            .parse()
            .unwrap_or(0.0)
    };
    assert!(r2("# forward, extended form") > 0.99, "{out}");
    assert!(r2("# forward, paper form") < 0.9, "{out}");
    let dir = std::env::temp_dir().join(format!("coplan-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "kind,batch,tokens,stage_s\nforward,1,128,0.03\nforward,one,128,0.03\n",
    )
    .expect("write");
    let (code, _, err) = run(&["profile".into(), "fit".into(), bad.display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.csv:3"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_vidur_profile_writes_the_samples_profile_fit_reads() {
    let dir = std::env::temp_dir().join(format!("coplan-vidur-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.join("samples.csv");
    let out_path = out.display().to_string();
    let import = |extra: &[&str]| {
        let mut a = vec![
            "import",
            "vidur-profile",
            "tests/fixtures/valid/vidur-mlp-sample.csv",
            "--layers-per-stage",
            "16",
        ];
        a.extend_from_slice(extra);
        run_strs(&a)
    };
    let (code, _, err) = import(&["--out", &out_path]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("DERIVED attention") && text.contains("ASSUMED"));
    assert!(
        text.contains("kind,batch,tokens,stage_s\nforward,1,1,"),
        "{text}"
    );
    let (code, fit, err) = run_strs(&["profile", "fit", &out_path]);
    assert_eq!(code, 0, "{err}");
    assert!(fit.contains("[model]"), "{fit}");
    for bad in [["--tp", "3"], ["--attention-efficiency", "1.5"]] {
        let (code, _, err) = import(&bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
    let (code, _, err) = run_strs(&[
        "import",
        "vidur-profile",
        "tests/fixtures/valid/azure-sample.csv",
        "--layers-per-stage",
        "16",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("missing column"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_azure_llm_writes_a_valid_workload_and_rejects_bad_rows() {
    let dir = std::env::temp_dir().join(format!("coplan-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let trace = dir.join("trace.csv");
    std::fs::write(
        &trace,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n2023-11-16 18:15:51.2224670,879,55",
    )
    .expect("write");
    let out = dir.join("w.toml");
    let (code, _, err) = run(&[
        "import".into(),
        "azure-llm".into(),
        trace.display().to_string(),
        "--rate-scale".into(),
        "2".into(),
        "--limit".into(),
        "2".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(
        text.contains("count = 2")
            && text.contains("arrival_s = 2.15729")
            && text.contains("CC-BY 4.0")
    );
    let (code, stdout, err) = run(&["validate".into(), out.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("2 explicit requests"));
    std::fs::write(&trace, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:50.99,many,109\n").expect("write");
    let (code, _, err) = run(&[
        "import".into(),
        "azure-llm".into(),
        trace.display().to_string(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("trace.csv:3") && err.contains("ContextTokens"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
