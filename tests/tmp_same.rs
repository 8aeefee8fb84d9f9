mod support;
#[test]
fn same() {
    for n in ["quickstart", "sweep12", "sbc_small", "csv", "misspec"] {
        let a = std::path::PathBuf::from(format!("/tmp/bit/base_{n}"));
        let b = std::path::PathBuf::from(format!("/tmp/bit/new_{n}"));
        support::assert_same_tables(&a, &b);
        if a.join("ranks.parquet").exists() {
            support::assert_same_frame(
                &support::table(&a, "ranks"),
                &support::table(&b, "ranks"),
                "ranks",
            );
        }
        eprintln!("{n}: same");
    }
}
