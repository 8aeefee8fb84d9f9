//! The `fieldmc` binary: everything lives in the library; see [`fieldmc::cli`].

fn main() -> std::process::ExitCode {
    fieldmc::cli::main()
}
