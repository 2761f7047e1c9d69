//! `engine config`: the config a command reads (`show`), and where configs, models and caches
//! are looked up (`path`).

use clap::{Args as ClapArgs, Subcommand};
use setup::{config, models};

use super::{ForGame, GameArgs, GameType, Loaded};

/// Show the effective config, or where configs, models and caches are looked up.
#[derive(ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the config a command reads, as YAML: the game's built-in config (comments and
    /// all), or, with `--config FILE`, the built-in config with the file merged over it.
    Show(ShowArgs),
    /// Print where configs, models and caches are looked up, in order, and which exist.
    Path,
}

#[derive(ClapArgs)]
struct ShowArgs {
    #[command(flatten)]
    game: GameArgs,
    /// `engine serve`'s config instead of a game's.
    #[arg(long, conflicts_with = "game")]
    serve: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::Show(show) => {
            let text = show_text(&show)?;
            out!("{text}")
        }
        Command::Path => out!("{}", path_text()),
    }
}

/// The YAML `engine config show` prints, once the sections every command reads are checked.
fn show_text(args: &ShowArgs) -> anyhow::Result<String> {
    let name = if args.serve {
        let (doc, path) = config::read("serve", args.game.config.as_deref())?;
        super::serve::check(&doc, &path)?;
        "serve"
    } else {
        args.game.dispatch(Check)?
    };
    let Some(file) = &args.game.config else {
        // As shipped: the comments say what every key means.
        let text = config::built_in(name).unwrap_or_default();
        return Ok(text.to_owned());
    };
    let (doc, _) = config::effective(name, Some((config::load(file)?, file.as_path())))?;
    Ok(format!(
        "# The built-in configs/{name}.yaml with {} merged over it.\n{}",
        file.display(),
        serde_yaml::to_string(&doc)?
    ))
}

/// Checks a game's config as the commands that play read it: its rules (the dispatch builds the
/// start position), `selfplay` and `inference`; gives the game's name.
struct Check;

impl ForGame for Check {
    type Output = &'static str;

    fn run<G: GameType>(self, _start: G, c: &Loaded) -> anyhow::Result<&'static str> {
        config::selfplay(&c.doc, &c.path)?;
        config::inference(&c.doc, &c.path)?;
        Ok(G::NAME)
    }
}

/// Where configs, models and caches are looked up, for `engine config path`.
fn path_text() -> String {
    let mut s = String::new();
    let mark = |found: bool| if found { "found" } else { "missing" };
    s += "configs (a command reads the first merged over the second):\n";
    s += "  1. --config FILE, where a command is given one\n";
    s += "  2. built-in configs/<game>.yaml and configs/serve.yaml (compiled into this engine; \
          `engine config show`)\n";
    s += "models (per game, the first that holds <game>/best.onnx gives its default network; \
          `engine models list`):\n";
    let roots = models::Roots::current();
    let dirs = [
        (1, models::MODELS_ENV, &roots.env, "not set"),
        (
            2,
            "checkout",
            &roots.checkout,
            "the checkout the engine was built from is gone",
        ),
        (3, "user data", &roots.user_data, "no home directory"),
    ];
    for (n, what, dir, none) in dirs {
        match dir {
            Some(d) => s += &format!("  {n}. {what}: {} ({})\n", d.display(), mark(d.is_dir())),
            None => s += &format!("  {n}. {what}: {none}\n"),
        }
    }
    s += "  4. built in: liuzhou (compiled into this engine)\n";
    s += "caches:\n  ONNX Runtime's library, the first found is loaded:\n";
    for (what, path) in infer::runtime::places() {
        s += &format!(
            "    {what}: {} ({})\n",
            path.display(),
            mark(path.is_file())
        );
    }
    s += &format!(
        "    none found: the first model load fetches it into {}\n",
        infer::runtime::cache_dir().display()
    );
    if let Some(dirs) = infer::runtime::user_dirs() {
        s += &format!("  user cache: {}\n", dirs.cache_dir().display());
        s += &format!("  user data:  {}\n", dirs.data_dir().display());
    }
    s
}
