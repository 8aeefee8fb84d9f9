//! Loading latent-field studies through the planner: defaults, and every class of error
//! with its located message.

use super::*;

#[test]
fn every_key_has_its_documented_default() {
    let study = parse_ok("[study]\n");
    assert_eq!(study.file.name, "t");
    assert_eq!(study.file.seed, 2020);
    assert_eq!(study.file.replicates, 1);
    assert_eq!(study.file.kind, StudyKind::Mcmc);
    assert_eq!(study.file.sbc, None);
    assert_eq!(study.file.description, None);
    assert_eq!(study.points.len(), 1);
    let point = &study.points[0];
    assert_eq!(latent(point).model.grid, Grid::new(16));
    assert_eq!(latent(point).model.kernel.length_scale, 0.3);
    assert_eq!(latent(point).model.kernel.variance, 1.0);
    assert_eq!(latent(point).model.likelihood, LikelihoodKind::Gaussian);
    assert_eq!(latent(point).model.offset, 0.0);
    assert_eq!(latent(point).model.noise_sd, 1.0);
    assert!(latent(point).output.marks.is_empty());
    assert_eq!(
        latent(point).data,
        crate::model::DataSpec::Simulated {
            truth_length_scale: 0.3,
            subsample: 4,
            trials: 1,
        }
    );
    let sampler = &latent(point).sampler;
    assert_eq!(
        (
            sampler.kind(),
            sampler.step(),
            sampler.iterations(),
            sampler.burn_in(),
            sampler.thin(),
            sampler.chains()
        ),
        (SamplerKind::LaplaceHmc, 0.2, 2_000, 1_000, 10, 4)
    );
    // The latent field's keys that are null here (the point's parameters are its family's).
    let null: Vec<Key> = point
        .params
        .iter()
        .filter(|(_, v)| v.is_null())
        .map(|(k, _)| *k)
        .collect();
    assert!(
        point
            .params
            .iter()
            .all(|(k, _)| crate::families::Family::LatentField.keys().contains(k))
    );
    assert_eq!(
        null,
        vec![
            keys::MODEL_WINDOW,
            keys::MODEL_REGION,
            keys::DATA_TRIALS_PER_CELL,
            keys::DATA_PATH,
            keys::DATA_X,
            keys::DATA_Y,
            keys::DATA_VALUE,
            keys::DATA_COLUMN,
            keys::DATA_TRIALS,
            keys::DATA_HOLDOUT,
            keys::DATA_FOLDS,
            keys::DATA_FOLD,
            keys::DATA_COVARIATES,
            keys::DATA_COVARIATES_PATH,
            keys::DATA_EXPOSURE,
            keys::DATA_OFFSET,
            keys::OUTPUT_EXCEEDANCE,
            keys::OUTPUT_MARKS,
            keys::OUTPUT_MARK_LABELS,
            keys::OUTPUT_PREDICT_SITES
        ]
    );
}

#[test]
fn the_quickstart_study_loads_as_fourteen_quick_jobs() {
    let study = parse(QUICKSTART, Path::new(QUICKSTART_ORIGIN)).unwrap();
    assert_eq!(study.file.name, "quickstart");
    assert_eq!(study.job_count(), 14);
    assert!(
        study
            .points
            .iter()
            .all(|p| latent(p).model.grid == Grid::new(16))
    );
    let kinds: Vec<(SamplerKind, usize, u64)> = study
        .points
        .iter()
        .map(|p| {
            let sampler = &latent(p).sampler;
            (sampler.kind(), sampler.chains(), sampler.iterations())
        })
        .collect();
    // The textbook kinds one chain of the shared 10,000 iterations each, the default its own
    // budget.
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == (SamplerKind::Grw, 1, 10_000))
            .count(),
        3
    );
    assert_eq!(kinds[0], (SamplerKind::LaplaceHmc, 4, 2_000));
}

#[test]
fn unknown_keys_list_the_allowed_ones_and_suggest_the_nearest() {
    let error = parse_err("[model]\ngrid = 8\n\nlenght_scale = 0.2\n");
    assert_eq!(error.kind, ErrorKind::UnknownKey);
    assert_eq!(
        error.to_string(),
        "studies/t.toml:4:1: unknown key `lenght_scale` in [model]\n  \
         allowed: family, grid, kernel, length_scale, variance, likelihood, offset, evidence_draws, mean, \
         length_scale_prior, length_scale_y, length_scale_y_prior, variance_prior, mean_prior, noise_sd_prior, \
         window, region, coefficient_prior\n  \
         help: did you mean `length_scale`?"
    );
    let misplaced = parse_err("[model]\nnoise_sd = 2.0\n").to_string();
    assert!(
        misplaced.contains("help: `noise_sd` belongs in [data]"),
        "{misplaced}"
    );
    let study_key = parse_err("[study]\nseeed = 1\n").to_string();
    assert!(study_key.starts_with("studies/t.toml:2:1: unknown key `seeed` in [study]"));
    assert!(study_key.contains("did you mean `seed`?"));
}

#[test]
fn unknown_sections_and_stray_keys_are_located() {
    let section = parse_err("[study]\n\n[modle]\ngrid = 4\n");
    assert_eq!(section.kind, ErrorKind::UnknownSection);
    assert!(
        section
            .to_string()
            .starts_with("studies/t.toml:3:2: unknown section [modle]")
    );
    assert!(section.to_string().contains("help: did you mean [model]?"));
    let stray = parse_err("seed = 4\n[study]\n").to_string();
    assert!(
        stray.starts_with("studies/t.toml:1:1: key `seed` is outside any section"),
        "{stray}"
    );
    assert!(stray.contains("help: put it under [study]"));
    let array_of_tables = headline("[[model]]\ngrid = 4\n");
    assert!(
        array_of_tables.contains("`model` must be a table ([model]), found an array of tables"),
        "{array_of_tables}"
    );
}

#[test]
fn syntax_errors_and_duplicate_keys_are_located() {
    let syntax = parse_err("[study]\nname = \"x\"\n[model\ngrid = 1\n");
    assert_eq!(syntax.kind, ErrorKind::Syntax);
    assert_eq!(syntax.location.line(), Some(3));
    assert!(syntax.message.starts_with("TOML syntax error"));
    let unterminated = parse_err("[study]\nname = \"x\n");
    assert_eq!(unterminated.location.line(), Some(2));
    let duplicate = parse_err("[model]\ngrid = 4\ngrid = 8\n");
    assert_eq!(duplicate.kind, ErrorKind::Syntax);
    assert!(
        duplicate
            .to_string()
            .starts_with("studies/t.toml:3:1: duplicate key `grid`"),
        "{duplicate}"
    );
    let table_twice = parse_err("[model]\ngrid = 4\n[data]\n[model]\nvariance = 2.0\n");
    assert_eq!(table_twice.location.line(), Some(4));
}

#[test]
fn wrong_types_say_what_was_expected_and_found() {
    let error = parse_err("[model]\ngrid = 16.0\n");
    assert_eq!(error.kind, ErrorKind::WrongType);
    assert_eq!(
        error.to_string(),
        "studies/t.toml:2:8: wrong type for `model.grid`: expected an integer, found a float\n  \
         help: write it without a decimal point: 16"
    );
    assert_eq!(
        headline("[sampler]\nkind = 1\n"),
        "studies/t.toml:2:8: wrong type for `sampler.kind`: expected a string, found an integer"
    );
    assert_eq!(
        headline("[model]\nlength_scale = \"0.3\"\n"),
        "studies/t.toml:2:16: wrong type for `model.length_scale`: expected a float, found a string"
    );
    assert!(headline("[study]\nseed = true\n").contains("expected an integer, found a boolean"));
    let array = parse_err("[sampler]\nbeta = [0.1, 0.2]\n").to_string();
    assert!(array.contains("found an array"));
    assert!(array.contains("\"sampler.beta\" = [...]"), "{array}");
    // Integers are fine where a float is expected.
    assert_eq!(
        latent(&parse_ok("[model]\nlength_scale = 1\n").points[0])
            .model
            .kernel
            .length_scale,
        1.0
    );
}

#[test]
fn values_out_of_range_are_refused_with_the_allowed_range() {
    let cases = [
        (
            "[model]\ngrid = 0\n",
            "studies/t.toml:2:8: `model.grid` = 0 is out of range",
            "an integer >= 1",
        ),
        (
            "[model]\ngrid = -3\n",
            "`model.grid` = -3 is out of range",
            "an integer >= 1",
        ),
        (
            "[model]\nlength_scale = -1.0\n",
            "`model.length_scale` = -1.0 is out of range",
            "a finite number > 0",
        ),
        (
            "[model]\nlength_scale = nan\n",
            "`model.length_scale` = NaN is out of range",
            "a finite number > 0",
        ),
        (
            "[model]\nvariance = inf\n",
            "`model.variance` = inf is out of range",
            "a finite number > 0",
        ),
        (
            "[model]\noffset = -inf\n",
            "`model.offset` = -inf is out of range",
            "a finite number",
        ),
        (
            "[data]\nnoise_sd = 0\n",
            "`data.noise_sd` = 0.0 is out of range",
            "a finite number > 0",
        ),
        (
            "[data]\nsubsample = 0\n",
            "`data.subsample` = 0 is out of range",
            "an integer >= 1",
        ),
        (
            "[sampler]\nchains = 65\n",
            "`sampler.chains` = 65 is out of range",
            "an integer from 1 to 64",
        ),
        (
            "[sampler]\nthin = 0\n",
            "`sampler.thin` = 0 is out of range",
            "an integer >= 1",
        ),
        (
            "[sampler]\niterations = 0\n",
            "`sampler.iterations` = 0 is out of range",
            "an integer >= 1",
        ),
        (
            "[sampler]\nburn_in = -1\n",
            "`sampler.burn_in` = -1 is out of range",
            "an integer >= 0",
        ),
        (
            "[sampler]\nbeta = nan\n",
            "`sampler.beta` = NaN is out of range",
            "a finite number",
        ),
        (
            "[study]\nreplicates = 0\n",
            "`study.replicates` = 0 is out of range",
            "an integer from 1 to 100000",
        ),
        (
            "[study]\nseed = -1\n",
            "`study.seed` = -1 is out of range",
            "an integer from 0 to 18446744073709551615",
        ),
        (
            "[model]\nlikelihood = \"possion\"\n",
            "unknown value \"possion\" for `model.likelihood`",
            "\"gaussian\" | \"probit\" | \"poisson\"",
        ),
        (
            "[study]\nkind = \"SBC\"\n",
            "unknown value \"SBC\" for `study.kind`",
            "\"mcmc\" | \"sbc\"",
        ),
    ];
    for (text, message, allowed) in cases {
        let error = parse_err(text);
        let shown = error.to_string();
        assert_eq!(error.kind, ErrorKind::OutOfRange, "{shown}");
        assert!(
            shown.lines().next().unwrap().ends_with(message),
            "{shown:?} should say {message:?}"
        );
        assert!(
            shown.contains(&format!("allowed: {allowed}")),
            "{shown:?} should allow {allowed:?}"
        );
        assert_eq!(error.location.line(), Some(2), "{shown}");
    }
    assert!(
        parse_err("[model]\nlikelihood = \"possion\"\n")
            .to_string()
            .contains("help: did you mean \"poisson\"?")
    );
    let huge = parse_err("[model]\ngrid = 99999999999999999999\n");
    assert_eq!(huge.location.line(), Some(2));
}

#[test]
fn beta_is_checked_against_the_sampler_kind() {
    let pcn = parse_err("[sampler]\nkind = \"pcn\"\nbeta = 1.5\n");
    assert_eq!(pcn.kind, ErrorKind::OutOfRange);
    assert!(
        pcn.to_string().starts_with(
            "studies/t.toml:3:8: sampler.beta = 1.5 is out of range for the pcn sampler"
        )
    );
    assert!(pcn.to_string().contains("allowed: for pcn: 0 < beta <= 1"));
    assert_eq!(
        latent(&parse_ok("[sampler]\nkind = \"grw\"\nbeta = 1.5\n").points[0])
            .sampler
            .step(),
        1.5
    );
    assert_eq!(
        latent(&parse_ok("[sampler]\nkind = \"pcn\"\nbeta = 1.0\n").points[0])
            .sampler
            .step(),
        1.0
    );
    assert!(
        headline("[sampler]\nkind = \"grw\"\nbeta = 0.0\n")
            .contains("out of range for the grw sampler")
    );
    assert!(
        headline("[sampler]\nkind = \"pcn\"\nbeta = -0.1\n")
            .contains("out of range for the pcn sampler")
    );
}

#[test]
fn settings_that_contradict_each_other_are_refused() {
    let burn_in = parse_err("[sampler]\niterations = 100\nburn_in = 100\n");
    assert_eq!(burn_in.kind, ErrorKind::Conflict);
    assert_eq!(
        burn_in.to_string().lines().next().unwrap(),
        "studies/t.toml:3:11: sampler.burn_in = 100 must be less than sampler.iterations = 100"
    );
    let subsample = parse_err("[model]\ngrid = 2\n[data]\nsubsample = 5\n");
    assert!(subsample.to_string().starts_with(
        "studies/t.toml:4:13: data.subsample = 5 leaves no observed cell on a 2 x 2 grid (4 cells)"
    ));
    // The default subsample of 4 on a 1 x 1 grid: the error points at the grid.
    let tiny = parse_err("[model]\ngrid = 1\n");
    assert_eq!(tiny.location.position, Some((2, 8)));
    assert_eq!(
        latent(&parse_ok("[model]\ngrid = 1\n[data]\nsubsample = 1\n").points[0])
            .model
            .grid,
        Grid::new(1)
    );
    let path = parse_err("[data]\npath = \"x.csv\"\n");
    assert_eq!(
        path.to_string().lines().next().unwrap(),
        "studies/t.toml:2:8: `data.path` applies only to data.source = \"csv\" or \"points\" or \"sites\", but the source is \"simulated\""
    );
    let no_path = parse_err("[data]\nsource = \"csv\"\n");
    assert!(
        no_path
            .to_string()
            .starts_with("studies/t.toml:2:10: data.source = \"csv\" needs data.path")
    );
    let subsample_csv = parse_err("[data]\nsource = \"csv\"\nsubsample = 2\npath = \"x.csv\"\n");
    assert!(
        subsample_csv
            .to_string()
            .contains("`data.subsample` applies only to data.source = \"simulated\"")
    );
}

#[test]
fn study_names_cannot_escape_the_output_folder() {
    for bad in ["../evil", "a/b", "", ".hidden", "x y", "C:\\x"] {
        let error = parse_err(&format!("[study]\nname = {bad:?}\n"));
        assert_eq!(error.location.position, Some((2, 8)), "{bad}");
        assert!(
            error.message.contains("cannot name an output folder"),
            "{error}"
        );
    }
    assert_eq!(
        parse_ok("[study]\nname = \"run-1.b_2\"\n").file.name,
        "run-1.b_2"
    );
    let stem = parse("[study]\n", Path::new("studies/my study.toml")).unwrap_err();
    assert!(
        stem.to_string()
            .starts_with("studies/my study.toml:1:1: the study has no name")
    );
}

#[test]
fn empty_missing_and_binary_files_are_errors() {
    for empty in ["", "\n\n  \n", "# only a comment\n"] {
        let error = parse_err(empty);
        assert_eq!(error.kind, ErrorKind::Empty);
        assert!(
            error
                .to_string()
                .starts_with("studies/t.toml:1:1: the study file is empty")
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let missing = load(&dir.path().join("none.toml")).unwrap_err();
    assert_eq!(missing.kind, ErrorKind::Unreadable);
    assert!(
        missing
            .to_string()
            .contains("none.toml: cannot read the study file")
    );
    let folder = load(dir.path()).unwrap_err();
    assert!(folder.to_string().contains("it is a folder"));
    let binary = dir.path().join("bin.toml");
    std::fs::write(&binary, b"[study]\nname = \"a\xff\"\n").unwrap();
    let error = load(&binary).unwrap_err();
    assert_eq!(error.kind, ErrorKind::NotText);
    assert_eq!(error.location.position, Some((2, 10)));
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "[model]\ngrid = 4\n").unwrap();
    let study = load(&good).unwrap();
    assert_eq!(
        (
            study.file.name.as_str(),
            latent(&study.points[0]).model.grid
        ),
        ("good", Grid::new(4))
    );
}

#[test]
fn sbc_settings_belong_to_sbc_studies() {
    let stray = parse_err("[sbc]\ndraws = 10\n");
    assert_eq!(stray.kind, ErrorKind::Conflict);
    assert!(stray.to_string().starts_with(
        "studies/t.toml:1:2: [sbc] applies only to simulation-based calibration studies"
    ));
    let defaults = parse_ok("[study]\nkind = \"sbc\"\n");
    assert_eq!(
        defaults.file.sbc,
        Some(SbcSpec {
            replications: 100,
            draws: 100
        })
    );
    let given = parse_ok("[study]\nkind = \"sbc\"\n[sbc]\nreplications = 20\ndraws = 15\n");
    assert_eq!(
        given.file.sbc,
        Some(SbcSpec {
            replications: 20,
            draws: 15
        })
    );
    assert!(
        headline("[study]\nkind = \"sbc\"\n[sbc]\ndraws = 0\n")
            .ends_with("`sbc.draws` = 0 is out of range")
    );
    let csv = parse_err("[study]\nkind = \"sbc\"\n[data]\nsource = \"csv\"\npath = \"x.csv\"\n");
    assert!(csv.message.contains("needs simulated data"));
    let misspecified = parse_err("[study]\nkind = \"sbc\"\n[data]\nlength_scale = 0.5\n");
    assert_eq!(misspecified.location.position, Some((4, 16)));
}

/// A list-valued key takes a TOML array or one comma-separated string, and the two are the same
/// job (the array's canonical text is the names joined by commas); a name with a comma or an
/// empty name in an array is refused where it is written.
#[test]
fn a_list_valued_key_takes_an_array_or_a_comma_string() {
    let id = |edges: &str| {
        let study = parse_ok(&format!(
            "[model]\nfamily = \"pagerank\"\nedges = {edges}\n[sampler]\niterations = 100\n"
        ));
        crate::plan::plan(&study).jobs[0].header.id.clone()
    };
    assert_eq!(id("[\"a>b\", \"b>c\", \"c>a\"]"), id("\"a>b,b>c,c>a\""));
    assert_ne!(id("[\"a>b\", \"b>a\"]"), id("\"a>b,b>c,c>a\""));
    let error = parse_err("[model]\nfamily = \"pagerank\"\nedges = [\"a>b\", \"b>c,c>a\"]\n");
    assert!(
        error.to_string().starts_with(
            "studies/t.toml:3:17: `model.edges`: an empty name, or a name with a comma"
        ),
        "{error}"
    );
}
