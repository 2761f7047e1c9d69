//! Provisions ONNX Runtime (ORT_DYLIB_PATH, the checkout's .ort/, the user's cache, or the pinned
//! PyPI wheel fetched into that cache) and prints the library's path: `cargo run -p infer --example ort_fetch`.

fn main() {
    match infer::runtime::library_path() {
        Ok(path) => println!("{}", path.display()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
