//! Loading latent-field studies through the planner: sweeps, data files, grids and
//! windows, and a property test that no input panics.

use super::*;

#[test]
fn sweeps_expand_to_the_cartesian_product_first_axis_outermost() {
    let study = parse_ok(
        "[study]\nreplicates = 2\n[sweep]\n\"sampler.kind\" = [\"grw\", \"pcn\"]\n\"sampler.beta\" = [0.1, 0.2, 0.5]\n",
    );
    assert_eq!(study.points.len(), 6);
    assert_eq!(study.job_count(), 12);
    let combos: Vec<(SamplerKind, f64)> = study
        .points
        .iter()
        .map(|p| (latent(p).sampler.kind(), latent(p).sampler.step()))
        .collect();
    assert_eq!(combos[0], (SamplerKind::Grw, 0.1));
    assert_eq!(combos[2], (SamplerKind::Grw, 0.5));
    assert_eq!(combos[3], (SamplerKind::Pcn, 0.1));
    assert_eq!(
        study.file.swept_keys(),
        vec![SAMPLER_KIND, keys::SAMPLER_BETA]
    );
}

#[test]
fn paired_axes_move_together() {
    let study = parse_ok(
        "[sweep]\n\"model.grid\" = [4, 8]\n[sweep.paired.length]\n\"model.length_scale\" = [0.1, 0.2, 0.3]\n\"data.length_scale\" = [0.15, 0.25, 0.35]\n",
    );
    assert_eq!(study.points.len(), 6);
    assert_eq!(study.file.axes[1].name, "paired.length");
    for point in &study.points {
        let crate::model::DataSpec::Simulated {
            truth_length_scale, ..
        } = latent(point).data
        else {
            panic!("simulated data expected");
        };
        assert!(
            (truth_length_scale - latent(point).model.kernel.length_scale - 0.05).abs() < 1e-12
        );
    }
    let unequal = parse_err(
        "[sweep.paired.l]\n\"model.length_scale\" = [0.1, 0.2]\n\"data.length_scale\" = [0.1]\n",
    );
    assert_eq!(unequal.kind, ErrorKind::Sweep);
    assert!(unequal.to_string().starts_with(
        "studies/t.toml:3:23: paired lists in [sweep.paired.l] must have the same length: `model.length_scale` has 2 values, `data.length_scale` has 1"
    ), "{unequal}");
}

#[test]
fn the_truth_length_scale_follows_a_swept_model_length_scale_unless_given() {
    let study = parse_ok("[sweep]\n\"model.length_scale\" = [0.1, 0.4]\n");
    let truths: Vec<ParamValue> = study
        .points
        .iter()
        .map(|p| p.param(keys::DATA_LENGTH_SCALE).clone())
        .collect();
    assert_eq!(truths, vec![ParamValue::Float(0.1), ParamValue::Float(0.4)]);
    let fixed =
        parse_ok("[data]\nlength_scale = 0.3\n[sweep]\n\"model.length_scale\" = [0.1, 0.4]\n");
    assert!(
        fixed
            .points
            .iter()
            .all(|p| *p.param(keys::DATA_LENGTH_SCALE) == ParamValue::Float(0.3))
    );
}

#[test]
fn sweep_keys_may_be_written_dotted_or_as_section_tables() {
    let quoted = parse_ok("[sweep]\n\"model.grid\" = [4, 8]\n");
    let dotted = parse_ok("[sweep]\nmodel.grid = [4, 8]\n");
    let table = parse_ok("[sweep.model]\ngrid = [4, 8]\n");
    assert_eq!(quoted.points, dotted.points);
    assert_eq!(quoted.points, table.points);
}

#[test]
fn malformed_sweeps_point_at_the_offending_text() {
    let cases = [
        (
            "[sweep]\n\"model.grid\" = []\n",
            "studies/t.toml:2:16: the sweep of `model.grid` is empty",
        ),
        (
            "[sweep]\n\"model.lenght_scale\" = [0.1]\n",
            "studies/t.toml:2:1: unknown key `model.lenght_scale` in [sweep]",
        ),
        (
            "[sweep]\n\"model.grid\" = [4, \"8\"]\n",
            "studies/t.toml:2:20: mixed types in the sweep of `model.grid`: the first value is an integer, this one is a string",
        ),
        (
            "[sweep]\n\"model.grid\" = [4, 0]\n",
            "studies/t.toml:2:20: `model.grid` = 0 is out of range",
        ),
        (
            "[sweep]\n\"model.grid\" = [4, 8.0]\n",
            "studies/t.toml:2:20: mixed types in the sweep of `model.grid`: the first value is an integer, this one is a float",
        ),
        (
            "[sweep]\n\"sampler.beta\" = [0.1, 0.1]\n",
            "studies/t.toml:2:24: `sampler.beta` lists the value 0.1 twice",
        ),
        (
            "[sweep]\n\"study.seed\" = [1, 2]\n",
            "studies/t.toml:2:1: `study.seed` cannot be swept",
        ),
        (
            "[sweep]\ngrid = [4]\n",
            "studies/t.toml:2:1: sweep key `grid` does not name its section",
        ),
        (
            "[sweep]\n\"model.grid\" = 4\n",
            "studies/t.toml:2:16: the sweep of `model.grid` must list its values in an array, found an integer",
        ),
        (
            "[sweep]\n\"model.grid\" = [4]\n[sweep.paired.g]\n\"model.grid\" = [8]\n",
            "studies/t.toml:4:1: `model.grid` is swept twice",
        ),
        (
            "[sweep]\n\"model.grid\" = [4]\nmodel.grid = [8]\n",
            "studies/t.toml:3:7: `model.grid` is swept twice",
        ),
        (
            "[sweep.paired]\nx = [1]\n",
            "studies/t.toml:2:1: `sweep.paired.x` must be a group of lists, found an array",
        ),
        (
            "[sweep.paired.empty]\n",
            "studies/t.toml:1:15: the paired group `empty` lists no keys",
        ),
    ];
    for (text, expected) in cases {
        let shown = parse_err(text).to_string();
        assert!(
            shown.starts_with(expected),
            "{shown:?}\nshould start with {expected:?}"
        );
    }
    let suggestion = parse_err("[sweep]\n\"model.lenght_scale\" = [0.1]\n").to_string();
    assert!(
        suggestion.contains("help: did you mean `model.length_scale`?"),
        "{suggestion}"
    );
    let twice = parse_err("[sweep]\n\"model.grid\" = [4]\nmodel.grid = [8]\n").to_string();
    assert!(
        twice.contains("note: first swept at studies/t.toml:2:1"),
        "{twice}"
    );
    // Integers and floats mix freely for a float key.
    assert_eq!(
        parse_ok("[sweep]\n\"sampler.beta\" = [1, 0.5]\n")
            .points
            .len(),
        2
    );
}

#[test]
fn an_error_at_one_sweep_point_names_the_point() {
    let error =
        parse_err("[sampler]\nbeta = 1.5\n[sweep]\n\"sampler.kind\" = [\"grw\", \"pcn\"]\n");
    let shown = error.to_string();
    assert!(
        shown.starts_with(
            "studies/t.toml:2:8: sampler.beta = 1.5 is out of range for the pcn sampler"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("note: in the sweep point sampler.kind = pcn"),
        "{shown}"
    );
    let swept_beta =
        parse_err("[sampler]\nkind = \"pcn\"\n[sweep]\n\"sampler.beta\" = [0.5, 2.0]\n");
    assert_eq!(swept_beta.location.position, Some((4, 24)));
}

#[test]
fn of_many_bad_sweep_points_the_first_in_sweep_order_is_the_error() {
    // 64 points, checked in pieces on several threads; points 9, 40 and 63 are bad, and the
    // error is point 9's, as a pass in order would find.
    let iterations: Vec<String> = (0..64)
        .map(|i| {
            if [9, 40, 63].contains(&i) {
                100 + i
            } else {
                1000 + i
            }
            .to_string()
        })
        .collect();
    let text = format!(
        "[sampler]\nburn_in = 500\n[sweep]\n\"sampler.iterations\" = [{}]\n",
        iterations.join(", ")
    );
    let shown = parse_err(&text).to_string();
    assert!(
        shown.contains("note: in the sweep point sampler.iterations = 109\n")
            || shown.ends_with("note: in the sweep point sampler.iterations = 109"),
        "{shown}"
    );
}

#[test]
fn jobs_too_large_for_memory_are_refused_with_the_estimate() {
    let error = parse_err("[model]\ngrid = 100000\n");
    assert_eq!(error.kind, ErrorKind::TooLarge);
    let shown = error.to_string();
    assert!(shown.starts_with("studies/t.toml:2:8: a job on a 100000 x 100000 grid with 4 chain(s) needs an estimated "), "{shown}");
    assert!(
        shown.contains("TiB of memory, above the limit of 12.0 GiB"),
        "{shown}"
    );
    let absurd = parse_err("[model]\ngrid = 9223372036854775807\n");
    assert_eq!(absurd.kind, ErrorKind::TooLarge);
    // 64 chains on a 512 x 512 grid: 8 * 262144 * 1032 bytes = 2.0 GiB: fine.
    assert_eq!(
        latent(&parse_ok("[model]\ngrid = 512\n[sampler]\nchains = 64\n").points[0])
            .sampler
            .chains(),
        64
    );
    let many = parse_err("[study]\nreplicates = 600000\n[sweep]\n\"sampler.beta\" = [0.1, 0.2]\n");
    assert_eq!(many.kind, ErrorKind::TooLarge);
    assert!(many.message.contains("more than 1000000 jobs"));
}

fn write_study_with_data(csv: &str, data_section: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/grid.csv"), csv).unwrap();
    let study = dir.path().join("real.toml");
    std::fs::write(
        &study,
        format!(
            "[model]\ngrid = 2\nlikelihood = \"poisson\"\n[data]\nsource = \"csv\"\n{data_section}"
        ),
    )
    .unwrap();
    (dir, study)
}

const CSV_2X2: &str = "i,j,x_center,y_center,count\n0,0,0.25,0.25,3\n1,0,0.75,0.25,0\n0,1,0.25,0.75,7\n1,1,0.75,0.75,1\n";

#[test]
fn csv_data_resolves_against_the_study_folder_and_is_checked_up_front() {
    let (dir, study) = write_study_with_data(CSV_2X2, "path = \"data/grid.csv\"\nholdout = 0.25\n");
    let loaded = load(&study).unwrap();
    let point = &loaded.points[0];
    let crate::model::DataSpec::Csv {
        path,
        column,
        trials,
        holdout,
        exposure: None,
    } = &latent(point).data
    else {
        panic!("csv data expected");
    };
    assert_eq!(*trials, None, "a poisson grid has no trials");
    assert!(path.is_absolute());
    assert_eq!(
        std::fs::canonicalize(path).unwrap(),
        std::fs::canonicalize(dir.path().join("data/grid.csv")).unwrap()
    );
    assert_eq!(
        (column.as_str(), *holdout),
        ("count", crate::model::data::HoldOut::Share(0.25))
    );
    assert_eq!(
        *point.param(keys::DATA_PATH),
        ParamValue::Text("data/grid.csv".into())
    );
    assert_eq!(*point.param(keys::DATA_SUBSAMPLE), ParamValue::Null);
    assert_eq!(*point.param(keys::DATA_LENGTH_SCALE), ParamValue::Null);

    let bad = CSV_2X2.replace("0,1,0.25,0.75,7", "0,1,0.25,0.75,-7");
    let (_dir, study) = write_study_with_data(&bad, "path = \"data/grid.csv\"\n");
    let error = load(&study).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Data);
    let shown = error.to_string();
    assert!(shown.contains("real.toml:6:8: bad data file: "), "{shown}");
    assert!(
        shown.contains("grid.csv:4: count = `-7` is not a count"),
        "{shown}"
    );

    let (_dir, study) = write_study_with_data(CSV_2X2, "path = \"data/missing.csv\"\n");
    assert!(
        load(&study)
            .unwrap_err()
            .to_string()
            .contains("missing.csv: cannot read the data file")
    );
    let (_dir, study) =
        write_study_with_data(CSV_2X2, "path = \"data/grid.csv\"\ncolumn = \"label\"\n");
    assert!(
        load(&study)
            .unwrap_err()
            .to_string()
            .contains("no column `label`; the columns are: i, j, x_center, y_center, count")
    );
    let (_dir, study) = write_study_with_data(CSV_2X2, "path = \"data/grid.csv\"\nholdout = 0.9\n");
    assert!(
        load(&study)
            .unwrap_err()
            .to_string()
            .contains("holds out all 4 cells")
    );
}

mod no_input_panics {
    use super::*;
    use proptest::prelude::*;

    fn try_parse(text: &str) {
        let _ = parse(text, Path::new("studies/fuzz.toml"));
    }

    /// Cut points that fall on character boundaries of `text`.
    fn boundary(text: &str, at: usize) -> usize {
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    }

    const FRAGMENTS: &[&str] = &[
        "[",
        "]",
        "=",
        "\"",
        "\n",
        "[sweep]\n",
        "[sweep.paired.x]\n",
        "\"model.grid\" = ",
        "[4, 8]",
        "[]",
        "0",
        "-1",
        "nan",
        "inf",
        "1e400",
        "0.0",
        "99999999999999999999",
        "\"csv\"",
        "{a = 1}",
        "[[model]]\n",
        "grid",
        "beta",
        "kind = \"sbc\"\n",
        "[sbc]\n",
        "path = \"../x.csv\"\n",
        "é",
        "\u{feff}",
        "#",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn random_text_never_panics(text in any::<String>()) {
            try_parse(&text);
        }

        #[test]
        fn mutated_quickstart_never_panics(
            edits in proptest::collection::vec((any::<usize>(), any::<usize>(), 0..FRAGMENTS.len()), 1..6)
        ) {
            let mut text = QUICKSTART.to_string();
            for (start, length, fragment) in edits {
                let start = boundary(&text, start);
                let end = boundary(&text, start + length % 12).max(start);
                text.replace_range(start..end, FRAGMENTS[fragment]);
            }
            try_parse(&text);
        }
    }
}

/// Every study in `tests/fixtures/studies/bad/` fails to load with the error its first line
/// announces (`# expect: :LINE:COL: message...`, after the file name) and, if given, also says
/// the text of its `# expect-also:` line. `empty.toml` has no room for a comment.
#[test]
fn the_corpus_of_broken_studies_gives_the_announced_errors() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/bad");
    let mut checked = 0;
    let mut wrong: Vec<String> = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    entries.sort();
    for path in entries {
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let header = |tag: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(tag))
                .map(str::to_string)
        };
        let expect = header("# expect: ").unwrap_or_else(|| {
            assert!(
                path.ends_with("empty.toml"),
                "{} announces no error",
                path.display()
            );
            ":1:1: the study file is empty".to_string()
        });
        let error = load(&path).expect_err(&path.display().to_string());
        let shown = error.to_string();
        let first_line = shown.lines().next().unwrap_or_default();
        let after_file = first_line
            .strip_prefix(&path.display().to_string())
            .unwrap_or(first_line);
        if !after_file.starts_with(&expect) {
            wrong.push(format!(
                "{}:\n{shown}\nshould start with {expect:?}",
                path.display()
            ));
        }
        if let Some(also) = header("# expect-also: ")
            && !shown.contains(&also)
        {
            wrong.push(format!(
                "{}:\n{shown}\nshould contain {also:?}",
                path.display()
            ));
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    assert!(checked >= 30, "only {checked} broken studies");
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let study = parse_ok("\u{feff}[model]\ngrid = 4\n");
    assert_eq!(latent(&study.points[0]).model.grid, Grid::new(4));
    assert_eq!(
        parse_err("\u{feff}[model]\ngrid = 0\n").location.position,
        Some((2, 8))
    );
}

#[cfg(unix)]
#[test]
fn an_endless_device_as_study_is_refused_instead_of_read_forever() {
    let error = load(Path::new("/dev/zero")).unwrap_err();
    let shown = error.to_string();
    assert!(
        shown.starts_with("/dev/zero: cannot read the study file: it is more than"),
        "{shown}"
    );
}

#[test]
fn a_study_file_over_the_size_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    let line = "# padding\n";
    let lines = MAX_STUDY_BYTES as usize / line.len() + 1;
    std::fs::write(&path, format!("[model]\ngrid = 4\n{}", line.repeat(lines))).unwrap();
    let shown = load(&path).unwrap_err().to_string();
    assert!(
        shown.contains("a study file may be at most 1048576"),
        "{shown}"
    );
}

#[test]
fn the_keys_added_with_the_sampler_protocol_are_validated_where_they_stand() {
    // mala named alone runs its own budget, burn-in included; told to adapt with none, it is
    // refused where the burn-in is written.
    assert_eq!(
        headline("[sampler]\nkind = \"mala\"\nburn_in = 0\n"),
        "studies/t.toml:3:11: the mala sampler adapts its step size during burn-in, but sampler.burn_in = 0"
    );
    parse_ok("[sampler]\nkind = \"mala\"\n");
    assert_eq!(
        headline("[sampler]\nkind = \"elliptical\"\nburn_in = 10\nadapt = true\n"),
        "studies/t.toml:4:9: the elliptical sampler has no step size to adapt"
    );
    assert_eq!(
        headline("[sampler]\nadapt = \"yes\"\n"),
        "studies/t.toml:2:9: wrong type for `sampler.adapt`: expected a boolean (true or false), found a string"
    );
    assert_eq!(
        headline("[model]\nmean = \"avto\"\n"),
        "studies/t.toml:2:8: unknown value \"avto\" for `model.mean`"
    );
    assert_eq!(
        headline("[sampler]\nkind = \"mala\"\nburn_in = 10\ntarget_acceptance = 1.5\n"),
        "studies/t.toml:4:21: `sampler.target_acceptance` = 1.5 is out of range"
    );
    let study = parse_ok("[model]\nmean = \"auto\"\n[sampler]\nkind = \"pcnl\"\nburn_in = 10\n");
    let point = &study.points[0];
    assert_eq!(latent(point).model.mean, crate::model::MeanSpec::Auto);
    assert_eq!(
        latent(point)
            .sampler
            .adaptation()
            .unwrap()
            .target_acceptance,
        0.574
    );
}

/// Keys added after the first release leave the canonical key (and so every job id and random
/// stream of existing studies) unchanged while they keep their defaults.
#[test]
fn new_keys_at_their_defaults_leave_job_keys_unchanged() {
    let plain = crate::plan::plan(&parse_ok("[sampler]\nkind = \"grw\"\n"));
    let explicit = crate::plan::plan(&parse_ok(
        "[model]\nmean = 0.0\n[sampler]\nkind = \"grw\"\nadapt = false\n[output]\nfield_draws = 5\n",
    ));
    assert_eq!(plain.jobs[0].header.key, explicit.jobs[0].header.key);
    assert!(!plain.jobs[0].header.key.contains("adapt"));
    let adapted = crate::plan::plan(&parse_ok(
        "[sampler]\nkind = \"grw\"\nadapt = true\nburn_in = 10\n",
    ));
    assert!(adapted.jobs[0].header.key.contains("sampler.adapt=true"));
    assert!(!adapted.jobs[0].header.key.contains("target_acceptance"));
    let aimed = crate::plan::plan(&parse_ok(
        "[sampler]\nkind = \"grw\"\nadapt = true\nburn_in = 10\ntarget_acceptance = 0.3\n",
    ));
    assert!(
        aimed.jobs[0]
            .header
            .key
            .contains("sampler.target_acceptance=0.3")
    );
}

/// `sampler.kind = "inla"` infers the hyperparameters with a prior on its own: it needs a prior
/// and refuses `sampler.hyper`, located at the key that is wrong; laplace, which fixes them,
/// points to inla.
#[test]
fn inla_needs_a_prior_and_no_sampler_hyper() {
    let ok = parse_ok(
        "[model]\nlength_scale_prior = \"log-normal(-1.2, 0.5)\"\n[sampler]\nkind = \"inla\"\n",
    );
    let spec = latent(&ok.points[0]);
    assert_eq!(spec.sampler.kind(), SamplerKind::Inla);
    assert_eq!(spec.model.hyper.len(), 1);
    assert_eq!(
        headline(
            "[model]\nlength_scale_prior = \"log-normal(-1.2, 0.5)\"\n[sampler]\nkind = \"inla\"\nhyper = \"within-gibbs\"\n"
        ),
        "studies/t.toml:5:9: sampler.hyper = \"within-gibbs\" says how Markov chains update the \
         hyperparameters, but the inla kind has no chain: it integrates over them on its own grid"
    );
    let no_prior = headline("[sampler]\nkind = \"inla\"\n");
    assert!(
        no_prior.starts_with("studies/t.toml:2:8: ")
            && no_prior.contains("no hyperparameter has a prior"),
        "{no_prior}"
    );
    let laplace = parse_err(
        "[model]\nvariance_prior = \"log-normal(0, 0.5)\"\n[sampler]\nkind = \"laplace\"\n",
    )
    .to_string();
    assert!(
        laplace.starts_with("studies/t.toml:2:18: ")
            && laplace.contains("the laplace approximation fixes every hyperparameter")
            && laplace.contains("sampler.kind = \"inla\""),
        "{laplace}"
    );
}

/// An inferred hyperparameter's chains start at its prior's median unless the study sets the
/// value (then there, with a warning when that is more than four prior sds out); `mean = "auto"`
/// counts as set (the intercept read from the data).
#[test]
fn hyperparameter_chains_start_at_the_prior_median_unless_set() {
    let study = "[model]\nlength_scale_prior = \"log-normal(-2.3, 1.0)\"\n\
                 variance_prior = \"log-normal(0.5, 0.2)\"\n{set}[sampler]\nkind = \"pcn\"\n\
                 hyper = \"within-gibbs\"\n";
    let start = |set: &str| {
        let parsed = parse_ok(&study.replace("{set}", set));
        let model = &latent(&parsed.points[0]).model;
        let start = model
            .hyper
            .chain_start(crate::model::hyper::fixed_values(model, 0.0));
        (start, model.hyper.far_starts(&start))
    };
    let (unset, far) = start("");
    assert!((unset.length_scale - (-2.3f64).exp()).abs() < 1e-12);
    assert!((unset.variance - 0.5f64.exp()).abs() < 1e-12);
    assert!(far.is_empty());
    let (set, far) = start("length_scale = 30.0\nvariance = 1.6\n");
    assert_eq!((set.length_scale, set.variance), (30.0, 1.6));
    let names: Vec<_> = far.iter().map(|f| f.0.name()).collect();
    assert_eq!(
        names,
        ["length_scale"],
        "log 1.6 is 0.15 sds from 0.5, log 30 is 5.7 out"
    );
}
