//! Every result table as the real binary writes it matches its declaration (each family's
//! `schema.rs`, listed by the registry `fieldmc::families::tables`): the column names, types and nullability, no undeclared column, every
//! always-present column there; and every declared column is written by some tiny study, so a
//! declared column that no writer fills is caught. Also: docs/tables.md's result-table reference is
//! the one the schema prints, and every study key's column belongs to the parameter family.
//!
//! Set FIELDMC_BLESS=1 to rewrite that reference from the schema.

mod support;

use std::collections::BTreeSet;
use std::path::Path;

use fieldmc::families::{self, is_parameter, latent_field};
use fieldmc::table::shared::jobs;
use fieldmc::table::{Entry, markdown};
use support::{read_table, run_output, write_file};

/// Gaussian, probit, poisson and binomial with model evidence, two chains and kept field draws;
/// the tiny noise sd makes the gaussian and probit jobs fail (their log-likelihood is -inf), so
/// failed rows are written too (poisson and binomial have no noise sd: their two jobs differ in
/// that column only).
const CHAINS_STUDY: &str = "[study]\nseed = 3\n\
    [model]\ngrid = 4\nevidence_draws = 16\n\
    [data]\nsubsample = 2\n\
    [sampler]\niterations = 300\nburn_in = 50\nthin = 3\nchains = 2\n\
    [output]\nfield_draws = 5\nlog_likelihood = true\n\
    [sweep]\n\"model.likelihood\" = [\"gaussian\", \"probit\", \"poisson\", \"binomial\"]\n\
    \"data.noise_sd\" = [1.0, 1e-300]\n";

const SBC_STUDY: &str = "[study]\nkind = \"sbc\"\nseed = 5\n\
    [sbc]\nreplications = 4\ndraws = 9\n\
    [model]\ngrid = 4\n[data]\nsubsample = 2\n\
    [sampler]\niterations = 300\nburn_in = 50\nchains = 2\n";

/// Hyperparameters inferred by each update (hyper.parquet, the `hyper_*` columns) and by INLA
/// (inla_grid.parquet, `laplace_fits`).
const HYPER_STUDY: &str = "[study]\nseed = 9\n\
    [model]\ngrid = 4\nlength_scale_prior = \"log-normal(-1.0, 0.4)\"\nvariance_prior = \"gamma(4, 4)\"\n\
    [data]\nsubsample = 2\n\
    [sampler]\nkind = \"elliptical\"\niterations = 300\nburn_in = 50\nchains = 2\n\
    [sweep]\n\"sampler.hyper\" = [\"within-gibbs\", \"surrogate-slice\", \"pseudo-marginal\"]\n";

/// Covariates with inferred coefficients and risk maps (the `coef_*` columns,
/// coefficients.parquet, the `exceedance_*` and `intensity_*` columns of fields.parquet).
const COVARIATES_STUDY: &str = concat!(
    "[study]\nseed = 13\n[model]\ngrid = 4\nlikelihood = \"poisson\"\n\
     [data]\nsubsample = 2\ncovariates = [\"slope\", \"bump\"]\ncovariates_path = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/studies/covariates_grid4.csv\"\n\
     [sampler]\niterations = 300\nchains = 2\n[output]\nexceedance = [1.5]\n"
);

/// Poisson counts with a per-cell exposure, a count left `NA` and a cell left out of the grid CSV
/// (fields.parquet's `offset`, null on the cell outside the file's mask).
const EXPOSURE_STUDY: &str = "[study]\nseed = 17\n[model]\ngrid = 2\nlikelihood = \"poisson\"\n\
    [data]\nsource = \"csv\"\npath = \"exposure_grid.csv\"\nholdout = 0.0\nexposure = \"population\"\n\
    [sampler]\nkind = \"laplace\"\n";

/// The data file of [`EXPOSURE_STUDY`]: cell (1, 1) left out, cell (1, 0) unobserved.
const EXPOSURE_GRID: &str = "i,j,count,population\n0,0,3,120\n1,0,NA,80\n0,1,7,250\n";

const INLA_STUDY: &str = "[study]\nseed = 7\n\
    [model]\ngrid = 4\nlength_scale_prior = \"log-normal(-1.2, 0.5)\"\n\
    mean_prior = \"normal(0, 1)\"\n\
    [data]\nsubsample = 2\n\
    [sampler]\nkind = \"inla\"\n";

/// A study on the shipped Chorley region (region.parquet) with the incinerator marked
/// (marks.parquet).
const REGION_STUDY: &str = concat!(
    "[study]\nseed = 7\n[model]\ngrid = 4\nregion = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/data/chorley_region.csv\"\nlikelihood = \"poisson\"\n[data]\nsource = \"points\"\npath = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/data/chorley_larynx.csv\"\n[sampler]\nkind = \"laplace\"\n\
     [output]\nmarks = [[354.5, 413.6]]\nmark_labels = [\"old incinerator\"]\n"
);

/// Measurements at sites (sites.parquet: fitted, held out, and the sites to predict at with
/// their names carried), with their LOO.
const SITES_STUDY: &str = concat!(
    "[study]\nseed = 7\n[model]\ngrid = 8\nwindow = [[0, 6.3], [0, 6.2]]\nlength_scale = 1.2\n\
     variance = 3000\n[data]\nsource = \"sites\"\npath = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/data/topo_sites.csv\"\nvalue = \"height\"\nnoise_sd = 10\nholdout = 0.2\n\
     [sampler]\niterations = 300\nburn_in = 50\nchains = 2\n\
     [output]\nlog_likelihood = true\nexceedance = [1.5]\npredict_sites = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/data/topo_new_sites.csv\"\n"
);

/// Binomial measurements at sites (sites.parquet's `trials`), from [`SITES_BINOMIAL_CSV`].
const SITES_BINOMIAL_STUDY: &str = "[study]\nseed = 7\n\
    [model]\ngrid = 4\nwindow = [[0, 1], [0, 1]]\nlikelihood = \"binomial\"\n\
    [data]\nsource = \"sites\"\npath = \"sites_binomial.csv\"\nvalue = \"k\"\ntrials = \"n\"\n\
    holdout = 0.0\n[sampler]\nkind = \"laplace\"\n";

const SITES_BINOMIAL_CSV: &str = "x,y,k,n\n0.1,0.1,1,3\n0.9,0.2,0,2\n0.5,0.5,2,2\n0.2,0.8,1,4\n";

/// A partition study on the Boston tracts: a short chain of each kind and every baseline.
fn partition_study() -> String {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    format!(
        "[study]\nseed = 7\n[model]\nfamily = \"partition\"\n\
         [data]\nareas = \"{}\"\nadjacency = \"{}\"\nid = \"tract_id\"\nadmin = \"town\"\n\
         coordinates = \"lon,lat\"\ntarget = \"cmedv\"\nfeatures = \"rm,lstat\"\n\
         [sampler]\niterations = 200\nthin = 50\n\
         [sweep]\n\"sampler.kind\" = [\"flip\", \"softmax-flip\", \"learned-flip\", \"admin\", \"kmeans\", \"spectral\"]\n",
        data.join("boston_tracts.csv").display(),
        data.join("boston_adjacency.csv").display()
    )
}

/// Runs `study` and returns (table name, column names) of every table written, after checking
/// each table against its declaration.
fn written_columns(dir: &Path, name: &str, study: &str) -> Vec<(String, BTreeSet<String>)> {
    let path = write_file(dir, &format!("{name}.toml"), study);
    let out = dir.join(name);
    let output = run_output(&path, &out, 2);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut written = Vec::new();
    for table in families::tables() {
        let Some(frame) = read_table(&out, table.name) else {
            continue;
        };
        let errors = table.check(&frame);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        let columns = frame
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect();
        written.push((table.name.to_string(), columns));
    }
    written
}

/// One tiny study of each family other than the latent field.
const FAMILY_STUDIES: [(&str, &str); 5] = [
    (
        "gaussian",
        "[model]\nfamily = \"gaussian\"\n[sampler]\niterations = 200\nchains = 2\n\
         [sweep]\n\"sampler.kind\" = [\"systematic-gibbs\", \"rwmh\"]\n",
    ),
    (
        "markov",
        "[model]\nfamily = \"markov-chain\"\nlambda2 = 0.5\n[sampler]\niterations = 500\n",
    ),
    (
        "pagerank",
        "[model]\nfamily = \"pagerank\"\nedges = \"a>b b>c c>a c>d\"\n[sampler]\niterations = 500\n",
    ),
    (
        "bayes",
        concat!(
            "[model]\nfamily = \"bayes-net\"\nnetwork = \"",
            env!("CARGO_MANIFEST_DIR"),
            "/data/mark_net.toml\"\nevidence = \"mrk=pass\"\n[sampler]\niterations = 300\nchains = 2\n"
        ),
    ),
    (
        "lda",
        "[model]\nfamily = \"lda\"\n[data]\ndocuments = 20\ndocument_length = 20\n\
         [sampler]\niterations = 10\nburn_in = 2\n",
    ),
];

#[test]
fn every_table_matches_its_schema_and_every_declared_column_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut written = written_columns(dir.path(), "chains", CHAINS_STUDY);
    written.extend(written_columns(dir.path(), "sbc", SBC_STUDY));
    written.extend(written_columns(dir.path(), "hyper", HYPER_STUDY));
    written.extend(written_columns(dir.path(), "inla", INLA_STUDY));
    written.extend(written_columns(dir.path(), "covariates", COVARIATES_STUDY));
    write_file(dir.path(), "exposure_grid.csv", EXPOSURE_GRID);
    written.extend(written_columns(dir.path(), "exposure", EXPOSURE_STUDY));
    written.extend(written_columns(dir.path(), "region", REGION_STUDY));
    written.extend(written_columns(dir.path(), "sites", SITES_STUDY));
    write_file(dir.path(), "sites_binomial.csv", SITES_BINOMIAL_CSV);
    written.extend(written_columns(
        dir.path(),
        "sites_binomial",
        SITES_BINOMIAL_STUDY,
    ));
    for (name, study) in FAMILY_STUDIES {
        written.extend(written_columns(dir.path(), name, study));
    }
    written.extend(written_columns(dir.path(), "partition", &partition_study()));
    let statuses: BTreeSet<String> = {
        let jobs = read_table(&dir.path().join("chains"), "jobs").unwrap();
        support::strings(&jobs, jobs::STATUS.name())
            .into_iter()
            .flatten()
            .collect()
    };
    assert_eq!(
        statuses,
        BTreeSet::from(["failed".to_string(), "ok".to_string()]),
        "the study writes ok and failed rows"
    );
    for table in families::tables() {
        let columns: BTreeSet<&String> = written
            .iter()
            .filter(|(name, _)| name == table.name)
            .flat_map(|(_, columns)| columns)
            .collect();
        assert!(!columns.is_empty(), "no study wrote {}", table.file_name());
        for entry in table.entries() {
            let covered = match entry {
                Entry::Column(spec) => columns.iter().any(|c| *c == spec.name),
                Entry::Group(group) => columns.iter().any(|c| group.contains(c)),
            };
            assert!(covered, "{}: no writer fills {entry:?}", table.name);
        }
    }
}

#[test]
fn the_table_reference_lists_the_tables_as_the_schema_declares_them() {
    const BEGIN: &str = "<!-- result tables: generated from the families' schema.rs -->\n";
    const END: &str = "<!-- end of result tables -->";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tables.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(BEGIN)
        .expect("docs/tables.md marks the generated section")
        + BEGIN.len();
    let end = text[start..]
        .find(END)
        .expect("docs/tables.md ends the section")
        + start;
    let generated = format!("\n{}", markdown(families::tables()));
    if text[start..end] != generated {
        if std::env::var_os("FIELDMC_BLESS").is_some() {
            let updated = format!("{}{generated}{}", &text[..start], &text[end..]);
            std::fs::write(&path, updated).unwrap();
            eprintln!(
                "FIELDMC_BLESS is set: docs/tables.md differed from the schema and was rewritten"
            );
        } else {
            panic!(
                "docs/tables.md's result tables differ from the schema; rerun with FIELDMC_BLESS=1:\n{generated}"
            );
        }
    }
}

#[test]
fn every_study_key_is_a_parameter_column_and_no_declared_column_is_one() {
    for &key in fieldmc::families::catalog().all() {
        let column = key.column();
        assert!(jobs::PARAMETERS.contains(column), "{key:?}: {column}");
        assert!(is_parameter(column));
        let declared = families::jobs_table()
            .entries()
            .any(|e| matches!(e, Entry::Column(spec) if spec.name == column));
        assert!(!declared, "{column} is both a key and a declared column");
    }
    assert!(!is_parameter(
        latent_field::schema::jobs::MODEL_MEAN_VALUE.name()
    ));
}
