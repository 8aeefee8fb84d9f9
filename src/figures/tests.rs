//! The report kit's unit tests: the study's shape (swept columns, representatives, labels) and
//! tables as the figures read them.

mod shape {
    use crate::figures::fixtures::{self as build, nums as num, table, text};
    use crate::figures::shape::*;
    use crate::figures::tables::{Found, Table};

    fn jobs() -> Table {
        table(vec![
            ("job_id", text(&["a", "b", "c", "d", "e", "f", "g", "h"])),
            ("replicate", num(&[0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0])),
            (
                "model_grid",
                num(&[4.0, 4.0, 16.0, 16.0, 4.0, 4.0, 16.0, 16.0]),
            ),
            ("model_length_scale", num(&[0.3; 8])),
            ("model_likelihood", text(&["gaussian"; 8])),
            (
                "data_length_scale",
                num(&[0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2]),
            ),
            (
                "sampler_kind",
                text(&["grw", "grw", "grw", "grw", "pcn", "pcn", "pcn", "pcn"]),
            ),
            (
                "status",
                text(&["ok", "ok", "ok", "failed", "ok", "ok", "ok", "ok"]),
            ),
        ])
    }

    #[test]
    fn swept_columns_fold_companions_and_ignore_constants() {
        let shape = StudyShape::of(&jobs(), &build::parameter_prefix, build::naming());
        assert_eq!(shape.swept_names(), ["model_grid", "sampler_kind"]);
        assert_eq!(shape.swept[0].companions, ["data_length_scale"]);
        assert!(shape.swept[0].is_numeric() && !shape.swept[1].is_numeric());
        assert_eq!(shape.ok_rows, [0, 1, 2, 4, 5, 6, 7]);
        assert_eq!(shape.levels(Found("model_grid")), 2);
        assert_eq!(shape.levels(Found("model_length_scale")), 1);
    }

    #[test]
    fn a_data_file_leads_its_paired_numeric_offset_and_is_labelled_by_name() {
        let files = ["../data/a_grid32.csv", "../data/b_grid32.csv"];
        let jobs = table(vec![
            ("job_id", text(&["a", "b", "c", "d"])),
            ("model_length_scale", num(&[0.1, 0.1, 1.0, 1.0])),
            ("model_offset", num(&[-3.0, 0.8, -3.0, 0.8])),
            ("data_path", text(&[files[0], files[1], files[0], files[1]])),
        ]);
        let shape = StudyShape::of(&jobs, &build::parameter_prefix, build::naming());
        assert_eq!(shape.swept_names(), ["model_length_scale", "data_path"]);
        let set = shape.swept("data_path").unwrap();
        assert_eq!(set.companions, ["model_offset"]);
        assert!(!set.is_numeric());
        assert_eq!(
            set.values,
            [Cell::Text(files[0].into()), Cell::Text(files[1].into())]
        );
        assert_eq!(shape.naming.label("data_path", &set.values[1]), "b_grid32");
    }

    #[test]
    fn representatives_are_first_replicates_of_each_sampler_and_grid() {
        let jobs = jobs();
        let shape = StudyShape::of(&jobs, &build::parameter_prefix, build::naming());
        let rows = representative_rows(&jobs, &shape, &shape.ok_rows);
        assert_eq!(rows, [0, 2, 4, 6]);
        // Without replicate 0 of (grw, 16), its replicate 1 stands in -- unless failed.
        let rows = representative_rows(&jobs, &shape, &[1, 3, 5]);
        assert_eq!(rows, [1, 3, 5]);
    }

    #[test]
    fn cells_order_numbers_numerically_and_labels_are_short() {
        let mut cells = vec![
            Cell::Num(16.0),
            Cell::Null,
            Cell::Num(4.0),
            Cell::Text("pcn".into()),
        ];
        cells.sort();
        assert_eq!(
            cells,
            [
                Cell::Num(4.0),
                Cell::Num(16.0),
                Cell::Text("pcn".into()),
                Cell::Null
            ]
        );
        let naming = build::naming();
        assert_eq!(naming.label("model_grid", &Cell::Num(16.0)), "D=16");
        assert_eq!(
            naming.label("sampler_kind", &Cell::Text("pcn".into())),
            "pcn"
        );
        assert_eq!(
            naming.joined_label(
                &["sampler_kind", "sampler_beta"],
                &[Cell::Text("grw".into()), Cell::Num(0.2)]
            ),
            "grw, β=0.2"
        );
    }
}

mod tables {
    use crate::figures::fixtures as build;
    use crate::figures::tables::*;

    #[test]
    fn format_number_is_compact_and_keeps_magnitude() {
        assert_eq!(format_number(16.0), "16");
        assert_eq!(format_number(0.2), "0.2");
        assert_eq!(format_number(0.69234), "0.6923");
        assert_eq!(format_number(123.456), "123.5");
        assert!(format_number(1.5e-5).contains('e'));
        assert_eq!(format_number(100000.0), "100000");
        assert!(format_number(2.5e7 + 0.5).contains('e'));
        assert_eq!(format_number(-0.04), "-0.04");
    }

    #[test]
    fn job_ids_are_distinct_in_first_appearance_order() {
        let table = build::table(vec![("job_id", build::text(&["b", "a", "b", "c", "a"]))]);
        assert_eq!(table.job_ids(), ["b", "a", "c"]);
        assert_eq!(table.rows_of_job("b"), [0, 2]);
    }
}
