use super::*;

#[test]
fn fit_recovers_known_coefficients() {
    let truth = LatencyModel {
        forward: PassCost::quadratic(2.0e-6),
        backward: PassCost::quadratic(1.0e-6),
        decode_base_s: 0.012,
        decode_per_token_s: 2.0e-6,
    };
    let mut samples = Vec::new();
    for (batch, tokens) in [(1, 128), (1, 512), (2, 256), (4, 1024), (8, 64)] {
        samples.push(Sample {
            kind: SampleKind::Forward,
            batch,
            tokens,
            stage_s: truth.forward_s(batch, tokens),
        });
        samples.push(Sample {
            kind: SampleKind::Backward,
            batch,
            tokens,
            stage_s: truth.backward_s(batch, tokens),
        });
        samples.push(Sample {
            kind: SampleKind::Decode,
            batch,
            tokens,
            stage_s: truth.decode_s(tokens as u64),
        });
    }
    let f = fit(&samples);
    let forward = f.forward.expect("forward samples");
    let (eta_f, qf) = forward.paper;
    assert!((eta_f - 2.0e-6).abs() < 1e-15 && (qf.r2 - 1.0).abs() < 1e-12);
    assert!(
        !forward.extended_supported(),
        "exact quadratic data: the paper's form"
    );
    assert_eq!(forward.chosen(), PassCost::quadratic(eta_f));
    assert!((f.backward.expect("backward").paper.0 - 1.0e-6).abs() < 1e-15);
    let ((d0, d1), _) = f.decode.expect("decode");
    assert!((d0 - 0.012).abs() < 1e-12 && (d1 - 2.0e-6).abs() < 1e-15);
}

fn at_lines(rows: &[(SampleKind, u32, u32, f64)]) -> Vec<(usize, Sample)> {
    rows.iter()
        .enumerate()
        .map(|(i, &(kind, batch, tokens, stage_s))| {
            (
                i + 2,
                Sample {
                    kind,
                    batch,
                    tokens,
                    stage_s,
                },
            )
        })
        .collect()
}

#[test]
fn constant_samples_are_refused_saying_r2_is_undefined() {
    use SampleKind::*;
    // 0.1 is not a binary fraction: the mean of the copies is off by rounding, and the old
    // R² divided by that rounding.
    for y in [0.5, 0.1] {
        let samples = at_lines(&[
            (Decode, 1, 64, 0.01),
            (Decode, 1, 128, 0.02),
            (Forward, 1, 128, y),
            (Forward, 2, 256, y),
            (Forward, 4, 512, y),
            (Forward, 8, 1024, y),
            (Forward, 1, 64, y),
        ]);
        let e = fit_for_spec(&samples).expect_err("constant");
        assert_eq!((e.line, e.kind), (4, Forward), "{e:?}");
        assert!(
            e.message
                .starts_with(&format!("the 5 forward samples all measure {y} s"))
        );
        assert!(e.message.contains("R² is undefined"), "{e:?}");
    }
    let one = at_lines(&[(Backward, 1, 128, 0.2)]);
    let e = fit_for_spec(&one).expect_err("one sample");
    assert!(
        e.message
            .starts_with("the one backward sample measures 0.2 s"),
        "{e:?}"
    );
}

#[test]
fn declining_samples_whose_fit_a_workload_refuses_are_refused() {
    use SampleKind::*;
    let mut rows = Vec::new();
    for (i, tokens) in [64u32, 128, 256, 512, 1024, 2048, 4096, 8192]
        .iter()
        .enumerate()
    {
        rows.push((Forward, 1, *tokens, 0.9 - 0.1 * i as f64));
    }
    let e = fit_for_spec(&at_lines(&rows)).expect_err("declining forward");
    assert_eq!(e.kind, Forward);
    assert!(
        e.message
            .contains("eta_forward = 0 (they take less time as C·ℓ² grows)")
            && e.message.contains("requires eta_forward > 0"),
        "{e:?}"
    );
    let decode = at_lines(&[
        (Decode, 1, 100, 0.03),
        (Decode, 1, 200, 0.02),
        (Decode, 1, 300, 0.01),
    ]);
    let e = fit_for_spec(&decode).expect_err("declining decode");
    assert!(e.message.contains("decode_per_token_s = -1e-4"), "{e:?}");
    let steep = at_lines(&[(Decode, 1, 100, 0.01), (Decode, 1, 200, 0.03)]);
    let e = fit_for_spec(&steep).expect_err("negative base");
    assert!(e.message.contains("decode_base_s = -1"), "{e:?}");
}

#[test]
fn a_forward_pass_too_short_for_any_slo_is_refused() {
    use SampleKind::*;
    let tiny = at_lines(&[(Forward, 1, 128, 1e-30), (Forward, 1, 256, 4e-30)]);
    let e = fit_for_spec(&tiny).expect_err("too short");
    assert!(e.message.contains("below the limit of 1e-9 s"), "{e:?}");
}

#[test]
fn measured_profiles_fit() {
    let text = std::fs::read_to_string("examples/profiles/llama-3-8b-a100-2-stages.csv")
        .expect("example profile");
    let samples = parse_samples_at_lines(&text).expect("valid samples");
    let fit = fit_for_spec(&samples).expect("a fit a workload accepts");
    assert!(fit.forward.is_some_and(|f| f.extended_supported()));
}

#[test]
fn malformed_rows_name_their_line() {
    let e = parse_samples("kind,batch,tokens,stage_s\nforward,1,128,0.03\nforwrd,1,2,0.1\n")
        .unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("unknown kind"));
    let e = parse_samples("forward,1,x,0.1").unwrap_err();
    assert_eq!((e.line, e.message.contains("tokens")), (1, true));
    assert!(parse_samples("forward,1,2").is_err());
}
