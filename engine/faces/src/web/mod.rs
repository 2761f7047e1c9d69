//! The web face of `engine serve`: one page (embedded in the binary) and a small JSON API.
//!
//! | method and path                  | body                                  | answer |
//! |----------------------------------|---------------------------------------|--------|
//! | `GET /`                          |                                       | the page |
//! | `GET /api/games`                 |                                       | games, sides, agents, strengths |
//! | `POST /api/sessions`             | `{game, side, level?, agent?, strength?, seed?}` | 201 + session |
//! | `GET /api/sessions/{id}`         |                                       | session |
//! | `DELETE /api/sessions/{id}`      |                                       | 204 |
//! | `GET /api/sessions/{id}/legal`   |                                       | `{legal: [...]}` |
//! | `POST /api/sessions/{id}/play`   | `{action}` in the game's notation     | session |
//! | `POST /api/sessions/{id}/undo`   |                                       | `{undone, session}` |
//! | `POST /api/sessions/{id}/engine` |                                       | `{played, session}` |
//! | `POST /api/sessions/{id}/resign` |                                       | session (the engine wins) |
//! | `POST /api/sessions/{id}/hint`   |                                       | `{hint, eval}`: the engine's choice in the person's place |
//! | `GET /api/sessions/{id}/record`  |                                       | the game record as a file |
//! | `POST /api/reviews`              | `{game, record}` or `{session}`       | 201 + review |
//! | `GET /api/reviews/{id}`          |                                       | review |
//! | `GET /api/reviews/{id}/progress` |                                       | the analysis so far |
//! | `POST /api/reviews/{id}/analyse` | `{strength?, seed?}`                  | progress: analysis starts |
//! | `POST /api/reviews/{id}/stop`    |                                       | progress |
//! | `GET /api/reviews/{id}/record`   |                                       | the reviewed game as a file |
//! | `DELETE /api/reviews/{id}`       |                                       | 204 |
//!
//! A session is what [`view::SessionView`] shows, a review what [`review::ReviewView`] shows
//! ([`review`] has how its analysis runs). Every refusal is a 4xx with `{"error": reason, "code":
//! code}` (codes are stable; the page translates them):
//! 400 malformed request or unknown game/side/agent, 404 unknown session, 409 not now (wrong
//! turn, game over, nothing to undo, engine busy, nobody to resign for or to hint to), 405 a method the path does not take, 413 body
//! too large, 415 not JSON, 422 an action that cannot be read or is illegal, or a record that does
//! not parse (with its `line`). The engine thinks
//! on tokio's blocking pool, at most `max_thinking` sessions at once (a random agent, which does
//! not think, takes no slot).

mod go;
mod liuzhou;
pub mod review;
mod store;
#[cfg(test)]
mod tests;
pub mod view;
mod xiangqi;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use eval::Evaluator;
use games::go::GoState;
use games::liuzhou::Liuzhou;
use games::xiangqi::Xiangqi;
use games::{Game, Player};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::session::{self, Match, MatchError};
use review::{ProgressView, Review, ReviewOf, ReviewView, Reviews, Status};
use store::Store;
use view::{
    agents_for, default_agent, ActionView, Choice, ChoiceError, HintView, Meta, SessionView,
    WebGame, WebMatch, WebSession, AGENT_NAMES,
};

/// The `serve` section of a serve config. Every key is documented in `configs/serve.yaml`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub addr: SocketAddr,
    pub max_sessions: usize,
    pub idle_timeout_s: u64,
    pub release_after_s: u64,
    pub max_visits: u64,
    pub default_visits: u64,
    pub default_agent: String,
    pub max_thinking: usize,
    pub max_actions: usize,
    pub max_body_bytes: usize,
    pub max_reviews: usize,
    pub max_analysing: usize,
    pub analysis_max_visits: u64,
    pub analysis_default_visits: u64,
    pub max_record_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_sessions: 64,
            idle_timeout_s: 3600,
            release_after_s: 300,
            max_visits: 20_000,
            default_visits: 400,
            // The network where a game has one, else the game's own agent or MCTS.
            default_agent: "net".to_string(),
            max_thinking: 2,
            max_actions: 2_000,
            max_body_bytes: 4096,
            max_reviews: 16,
            max_analysing: 1,
            analysis_max_visits: 1600,
            analysis_default_visits: 200,
            max_record_bytes: 1 << 20,
        }
    }
}

impl Config {
    /// Checks the settings that would make a server that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("max_sessions", self.max_sessions as u64),
            ("idle_timeout_s", self.idle_timeout_s),
            ("release_after_s", self.release_after_s),
            ("max_visits", self.max_visits),
            ("max_thinking", self.max_thinking as u64),
            ("max_actions", self.max_actions as u64),
            ("max_body_bytes", self.max_body_bytes as u64),
            ("max_reviews", self.max_reviews as u64),
            ("max_analysing", self.max_analysing as u64),
            ("analysis_max_visits", self.analysis_max_visits),
            ("max_record_bytes", self.max_record_bytes as u64),
        ];
        if let Some((k, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{k} must be at least 1"));
        }
        if !(1..=self.max_visits).contains(&self.default_visits) {
            return Err(format!(
                "default_visits {} is outside 1..=max_visits ({})",
                self.default_visits, self.max_visits
            ));
        }
        if !(1..=self.analysis_max_visits).contains(&self.analysis_default_visits) {
            return Err(format!(
                "analysis_default_visits {} is outside 1..=analysis_max_visits ({})",
                self.analysis_default_visits, self.analysis_max_visits
            ));
        }
        // Reviews share the thinking slots with players; they must leave players some.
        if self.max_analysing > self.max_thinking {
            return Err(format!(
                "max_analysing {} is more than max_thinking ({})",
                self.max_analysing, self.max_thinking
            ));
        }
        if !AGENT_NAMES.contains(&self.default_agent.as_str()) {
            return Err(format!(
                "default_agent {:?} is not one of {}",
                self.default_agent,
                AGENT_NAMES.join(", ")
            ));
        }
        Ok(())
    }
}

/// What the server needs of one game: its start position (with the variant settings read from
/// its config) and, where a model is configured, its network.
#[derive(Clone)]
pub struct Setup<G: Game> {
    pub start: G,
    pub net: Option<Arc<dyn Evaluator<G>>>,
}

impl<G: Game + Default> Default for Setup<G> {
    fn default() -> Self {
        Setup {
            start: G::default(),
            net: None,
        }
    }
}

/// Every game the server plays. A game joins the server with a field here, an arm in
/// [`new_session`], a line in [`game_infos`], a file in this module implementing [`WebGame`],
/// and keys in `serve`'s `games` and `models` config sections.
#[derive(Clone)]
pub struct Setups {
    pub liuzhou: Setup<Liuzhou>,
    pub xiangqi: Setup<Xiangqi>,
    pub go: Setup<GoState>,
}

impl Default for Setups {
    fn default() -> Self {
        Setups {
            liuzhou: Setup::default(),
            xiangqi: Setup::default(),
            go: Setup {
                start: GoState::with_size(9),
                net: None,
            },
        }
    }
}

struct App {
    config: Config,
    setups: Setups,
    store: Store,
    reviews: Reviews,
    thinking: Arc<Semaphore>,
    /// Reviews whose analysis may run at once; each also takes a thinking slot per position.
    analysing: Arc<Semaphore>,
    /// Whether the task that gives idle sessions' search memory back runs (started with the
    /// first session, on the server's runtime).
    sweeping: std::sync::Once,
}

type AppState = Arc<App>;

/// The whole server as a router: the page, its assets and the API.
pub fn router(config: Config, setups: Setups) -> Router {
    routes(App::new(config, setups))
}

impl App {
    fn new(config: Config, setups: Setups) -> AppState {
        Arc::new(App {
            store: Store::new(
                config.max_sessions,
                Duration::from_secs(config.idle_timeout_s),
            ),
            reviews: Reviews::new(
                config.max_reviews,
                Duration::from_secs(config.idle_timeout_s),
            ),
            thinking: Arc::new(Semaphore::new(config.max_thinking)),
            analysing: Arc::new(Semaphore::new(config.max_analysing)),
            setups,
            config,
            sweeping: std::sync::Once::new(),
        })
    }

    /// Starts the sweep of idle sessions' search memory, once. It checks a few times per
    /// `release_after_s` and ends with the app.
    fn start_sweeping(self: &Arc<Self>) {
        self.sweeping.call_once(|| {
            let app = Arc::downgrade(self);
            let after = Duration::from_secs(self.config.release_after_s);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval((after / 4).max(Duration::from_secs(1)));
                loop {
                    tick.tick().await;
                    let Some(app) = app.upgrade() else { break };
                    // Freeing tens of MB is blocking work.
                    let n = tokio::task::spawn_blocking(move || app.store.release_idle(after))
                        .await
                        .unwrap_or(0);
                    if n > 0 {
                        tracing::info!(sessions = n, "gave idle sessions' search memory back");
                    }
                }
            });
        });
    }
}

fn routes(app: AppState) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/assets/app.js", get(app_js))
        .route("/assets/i18n.js", get(i18n_js))
        .route("/assets/review.js", get(review_js))
        .route("/assets/style.css", get(style_css))
        .route("/api/games", get(games))
        .route("/api/sessions", post(create))
        .route("/api/sessions/{id}", get(show).delete(delete))
        .route("/api/sessions/{id}/legal", get(legal))
        .route("/api/sessions/{id}/play", post(play))
        .route("/api/sessions/{id}/undo", post(undo))
        .route("/api/sessions/{id}/engine", post(engine))
        .route("/api/sessions/{id}/resign", post(resign))
        .route("/api/sessions/{id}/hint", post(hint))
        .route("/api/sessions/{id}/record", get(record))
        .route(
            "/api/reviews",
            post(create_review).layer(DefaultBodyLimit::max(app.config.max_record_bytes)),
        )
        .route("/api/reviews/{id}", get(show_review).delete(delete_review))
        .route("/api/reviews/{id}/progress", get(review_progress))
        .route("/api/reviews/{id}/analyse", post(analyse_review))
        .route("/api/reviews/{id}/stop", post(stop_review))
        .route("/api/reviews/{id}/record", get(review_record))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(app.config.max_body_bytes))
        .with_state(app)
}

// ---- errors ----

/// A refusal: the status, a stable code the page translates (`not_your_turn`, `bad_record`, …)
/// and the reason in English, sent as `{"error": reason, "code": code}` (plus `line` for a
/// record that does not parse).
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    reason: String,
    /// The line of a record where reading it failed.
    line: Option<usize>,
}

impl ApiError {
    /// A refusal whose code is the status's own (`bad_request`, `not_found`, `conflict`, …).
    fn new(status: StatusCode, reason: impl Into<String>) -> ApiError {
        let code = match status {
            StatusCode::BAD_REQUEST => "bad_request",
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::METHOD_NOT_ALLOWED => "bad_method",
            StatusCode::CONFLICT => "conflict",
            StatusCode::PAYLOAD_TOO_LARGE => "too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "not_json",
            StatusCode::UNPROCESSABLE_ENTITY => "unprocessable",
            StatusCode::SERVICE_UNAVAILABLE => "unavailable",
            _ => "internal",
        };
        ApiError {
            status,
            code,
            reason: reason.into(),
            line: None,
        }
    }

    /// The same refusal with a more specific code.
    fn code(mut self, code: &'static str) -> ApiError {
        self.code = code;
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(status = %self.status, reason = %self.reason, "request failed");
        } else {
            tracing::debug!(status = %self.status, reason = %self.reason, "request refused");
        }
        let mut body = serde_json::json!({ "error": self.reason, "code": self.code });
        if let Some(line) = self.line {
            body["line"] = line.into();
        }
        (self.status, Json(body)).into_response()
    }
}

impl From<MatchError> for ApiError {
    fn from(e: MatchError) -> ApiError {
        use StatusCode as S;
        let (status, code) = match e {
            MatchError::GameOver => (S::CONFLICT, "game_over"),
            MatchError::NotYourTurn => (S::CONFLICT, "not_your_turn"),
            MatchError::NotEngineTurn => (S::CONFLICT, "not_engine_turn"),
            MatchError::NothingToUndo => (S::CONFLICT, "nothing_to_undo"),
            MatchError::NoPerson => (S::CONFLICT, "no_person"),
            MatchError::NoPersonToHelp => (S::CONFLICT, "no_person_to_help"),
            MatchError::TooLong { .. } => (S::CONFLICT, "too_long"),
            MatchError::Parse { .. } => (S::UNPROCESSABLE_ENTITY, "unreadable_action"),
            MatchError::Illegal(_) => (S::UNPROCESSABLE_ENTITY, "illegal_action"),
            MatchError::Agent(_) => (S::INTERNAL_SERVER_ERROR, "engine_failed"),
        };
        ApiError::new(status, e.to_string()).code(code)
    }
}

impl From<ChoiceError> for ApiError {
    fn from(e: ChoiceError) -> ApiError {
        let code = match e {
            ChoiceError::Unknown { .. } => "unknown_agent",
            ChoiceError::Strength { .. } => "bad_strength",
            ChoiceError::NoModel { .. } => "no_model",
            ChoiceError::Build { .. } => "engine_failed",
            ChoiceError::UnknownLevel { .. } => "unknown_level",
            ChoiceError::LevelAndAgent => "level_and_agent",
        };
        ApiError::new(StatusCode::BAD_REQUEST, e.to_string()).code(code)
    }
}

impl From<JsonRejection> for ApiError {
    fn from(e: JsonRejection) -> ApiError {
        ApiError::new(e.status(), e.body_text())
    }
}

/// The `{id}` of a session's path, read so that a path that cannot be (bad percent-encoding)
/// is refused like any other request, with `{"error": reason}`.
struct SessionId(String);

impl<S: Send + Sync> FromRequestParts<S> for SessionId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<SessionId, ApiError> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(id)| SessionId(id))
            .map_err(|e| ApiError::new(e.status(), e.body_text()))
    }
}

fn busy() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "the engine is thinking in this session; wait for its move",
    )
    .code("engine_busy")
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such page or endpoint")
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{} does not take {method}", uri.path()),
    )
}

// ---- assets ----

const INDEX_HTML: &str = include_str!("../../web/index.html");
const APP_JS: &str = include_str!("../../web/app.js");
const I18N_JS: &str = include_str!("../../web/i18n.js");
const REVIEW_JS: &str = include_str!("../../web/review.js");
const STYLE_CSS: &str = include_str!("../../web/style.css");

/// The page loads nothing from elsewhere; the policy makes that a rule the browser enforces.
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'";

fn asset(mime: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(mime)),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

async fn i18n_js() -> Response {
    asset("text/javascript; charset=utf-8", I18N_JS)
}

async fn review_js() -> Response {
    asset("text/javascript; charset=utf-8", REVIEW_JS)
}

async fn style_css() -> Response {
    asset("text/css; charset=utf-8", STYLE_CSS)
}

// ---- games ----

#[derive(Serialize)]
struct GameInfo {
    name: &'static str,
    title: &'static str,
    sides: [&'static str; 2],
    /// The agents that can play this game: its own first, `net` only where a model is loaded.
    agents: Vec<&'static str>,
    /// The agent a new game gets when it names none.
    default_agent: String,
    /// The named levels this server plays, weakest first, each with its Elo.
    levels: Vec<view::LevelView>,
}

fn info<G: WebGame>(setup: &Setup<G>, config: &Config) -> GameInfo {
    let has_net = setup.net.is_some();
    GameInfo {
        name: G::NAME,
        title: G::TITLE,
        sides: G::SIDES,
        agents: agents_for::<G>(has_net),
        default_agent: default_agent::<G>(&config.default_agent, has_net),
        levels: view::offered_levels::<G>(has_net)
            .into_iter()
            .map(view::LevelView::from)
            .collect(),
    }
}

#[derive(Serialize)]
struct GamesReply {
    games: Vec<GameInfo>,
    agents: &'static [&'static str],
    default_agent: String,
    default_visits: u64,
    max_visits: u64,
    analysis_default_visits: u64,
    analysis_max_visits: u64,
}

/// The games this server plays: one line per game.
fn game_infos(setups: &Setups, config: &Config) -> Vec<GameInfo> {
    vec![
        info(&setups.liuzhou, config),
        info(&setups.xiangqi, config),
        info(&setups.go, config),
    ]
}

async fn games(State(app): State<AppState>) -> Json<GamesReply> {
    Json(GamesReply {
        games: game_infos(&app.setups, &app.config),
        agents: AGENT_NAMES,
        default_agent: app.config.default_agent.clone(),
        default_visits: app.config.default_visits,
        max_visits: app.config.max_visits,
        analysis_default_visits: app.config.analysis_default_visits,
        analysis_max_visits: app.config.analysis_max_visits,
    })
}

// ---- sessions ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    game: String,
    /// The person's side: `first`/`second`, the side's name in the game (`black`, `red`, …),
    /// or `none` to watch the engine play itself.
    side: String,
    agent: Option<String>,
    /// Visits per decision for searching agents.
    strength: Option<u64>,
    /// A named level (`players::levels`), in place of `agent` and `strength`.
    level: Option<String>,
    /// Seed of the engine's random choices; random when absent.
    seed: Option<u64>,
}

fn parse_side<G: WebGame>(text: &str) -> Result<Option<Player>, ApiError> {
    session::parse_side(text, G::SIDES)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e).code("bad_side"))
}

/// A new game's settings that do not depend on the game.
struct Order<'a> {
    req: &'a NewGame,
    id: String,
    visits: u64,
    seed: u64,
}

fn make<G: WebGame>(
    setup: &Setup<G>,
    order: &Order<'_>,
    config: &Config,
) -> Result<Box<dyn WebSession>, ApiError> {
    let human = parse_side::<G>(&order.req.side)?;
    let has_net = setup.net.is_some();
    if let Some(name) = &order.req.level {
        if order.req.agent.is_some() || order.req.strength.is_some() {
            return Err(ChoiceError::LevelAndAgent.into());
        }
        let (agent, level, kind, visits) =
            view::build_level::<G>(name, order.seed, setup.net.as_ref())?;
        let game = Match::new(setup.start.clone(), human, agent, config.max_actions)?;
        let meta = Meta {
            id: order.id.clone(),
            agent: kind,
            strength: visits,
            level: Some(level.key.clone()),
        };
        return Ok(Box::new(WebMatch { game, meta }));
    }
    let spec = Choice {
        name: order
            .req
            .agent
            .clone()
            .unwrap_or_else(|| default_agent::<G>(&config.default_agent, has_net)),
        visits: order.visits,
        seed: order.seed,
    };
    let agent = spec.build::<G>(setup.net.as_ref())?;
    let game = Match::new(setup.start.clone(), human, agent, config.max_actions)?;
    let meta = Meta {
        id: order.id.clone(),
        agent: spec.name,
        strength: spec.visits,
        level: None,
    };
    Ok(Box::new(WebMatch { game, meta }))
}

/// A session of the game named in the request: one arm per game.
fn new_session(app: &App, order: &Order<'_>) -> Result<Box<dyn WebSession>, ApiError> {
    let cfg = &app.config;
    match order.req.game.as_str() {
        Liuzhou::NAME => make(&app.setups.liuzhou, order, cfg),
        Xiangqi::NAME => make(&app.setups.xiangqi, order, cfg),
        GoState::NAME => make(&app.setups.go, order, cfg),
        other => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "unknown game {other:?}; this server plays: {}",
                game_infos(&app.setups, &app.config)
                    .iter()
                    .map(|g| g.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .code("unknown_game")),
    }
}

async fn create(
    State(app): State<AppState>,
    body: Result<Json<NewGame>, JsonRejection>,
) -> Result<(StatusCode, Json<SessionView>), ApiError> {
    let Json(req) = body?;
    let order = Order {
        req: &req,
        id: Store::new_id(),
        visits: req.strength.unwrap_or(app.config.default_visits),
        seed: req.seed.unwrap_or_else(rand::random),
    };
    Choice {
        name: String::new(),
        visits: order.visits,
        seed: order.seed,
    }
    .validate(app.config.max_visits)?;
    let session = new_session(&app, &order)?;
    app.start_sweeping();
    let view = session.view();
    let id = order.id.clone();
    app.store.insert(id.clone(), session).map_err(|e| {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()).code("server_full")
    })?;
    tracing::info!(session = %id, sessions = app.store.len(), game = %req.game, side = %req.side, agent = %view.agent, visits = order.visits, "new game");
    Ok((StatusCode::CREATED, Json(view)))
}

impl App {
    /// The session `id`, taken for this request; busy while the engine thinks in it.
    fn take(
        &self,
        id: &str,
    ) -> Result<tokio::sync::OwnedMutexGuard<Box<dyn WebSession>>, ApiError> {
        let shared = self.store.get(id).ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no session {id:?} (it expired, was deleted, or never existed)"),
            )
            .code("no_session")
        })?;
        shared.try_lock_owned().map_err(|_| busy())
    }
}

async fn show(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<SessionView>, ApiError> {
    Ok(Json(app.take(&id)?.view()))
}

async fn delete(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<StatusCode, ApiError> {
    // Taking it first refuses to drop a session in the middle of a think.
    drop(app.take(&id)?);
    app.store.remove(&id);
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize)]
struct LegalReply {
    legal: Vec<ActionView>,
}

async fn legal(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<LegalReply>, ApiError> {
    Ok(Json(LegalReply {
        legal: app.take(&id)?.legal(),
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayRequest {
    action: String,
}

async fn play(
    State(app): State<AppState>,
    SessionId(id): SessionId,
    body: Result<Json<PlayRequest>, JsonRejection>,
) -> Result<Json<SessionView>, ApiError> {
    let mut session = app.take(&id)?;
    let Json(req) = body?;
    session.play(&req.action)?;
    Ok(Json(session.view()))
}

#[derive(Serialize)]
struct UndoReply {
    undone: usize,
    session: SessionView,
}

async fn undo(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<UndoReply>, ApiError> {
    let mut session = app.take(&id)?;
    let undone = session.undo()?;
    Ok(Json(UndoReply {
        undone,
        session: session.view(),
    }))
}

#[derive(Serialize)]
struct EngineReply {
    played: ActionView,
    session: SessionView,
}

async fn engine(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<EngineReply>, ApiError> {
    let (played, view) = think(&app, &id, |session| {
        let played = session.engine_move();
        (played, session.view())
    })
    .await?;
    Ok(Json(EngineReply {
        played: played?,
        session: view,
    }))
}

/// The engine thinks in the person's place, as for its own moves.
async fn hint(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<HintView>, ApiError> {
    Ok(Json(think(&app, &id, |session| session.hint()).await??))
}

/// Runs `work` (which makes the engine think) on session `id`: on the blocking pool, so the
/// async workers keep answering other requests, holding one of the thinking slots unless the
/// agent does not think (then it does not wait behind games that do).
async fn think<T: Send + 'static>(
    app: &AppState,
    id: &str,
    work: impl FnOnce(&mut Box<dyn WebSession>) -> T + Send + 'static,
) -> Result<T, ApiError> {
    let mut session = app.take(id)?;
    let permit =
        if session.moves_instantly() {
            None
        } else {
            Some(app.thinking.clone().acquire_owned().await.map_err(|_| {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "server shutting down")
            })?)
        };
    let done = app.clone();
    let id = id.to_string();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let result = work(&mut session);
        // Idle from now, not from the request's start: a think longer than `release_after_s`
        // must not lose its fresh tree to the next sweep. (Touched while the session is still
        // held, so no sweep sees it in between.)
        done.store.touch(&id);
        result
    })
    .await
    .map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the engine's thread failed: {e}"),
        )
    })
}

async fn resign(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<SessionView>, ApiError> {
    let mut session = app.take(&id)?;
    session.resign()?;
    Ok(Json(session.view()))
}

async fn record(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Response, ApiError> {
    let rec = app.take(&id)?.record();
    record_file(rec)
}

fn record_file(rec: view::Record) -> Result<Response, ApiError> {
    let disposition = format!("attachment; filename=\"{}\"", rec.filename);
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(rec.mime)),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition)
                    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?,
            ),
        ],
        rec.text,
    )
        .into_response())
}

// ---- reviews ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewReview {
    /// With `record`: the game and the record's text in its format.
    game: Option<String>,
    record: Option<String>,
    /// Instead: a game of this server, reviewed as its record.
    session: Option<String>,
}

fn review_of<G: WebGame>(
    setup: &Setup<G>,
    text: &str,
    config: &Config,
) -> Result<Review, ApiError> {
    let record = G::read_record(&setup.start, text).map_err(|e| ApiError {
        status: StatusCode::UNPROCESSABLE_ENTITY,
        code: "bad_record",
        reason: e.to_string(),
        line: e.line,
    })?;
    if record.actions.len() > config.max_actions {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "the record has {} actions; this server reviews at most {}",
                record.actions.len(),
                config.max_actions
            ),
        )
        .code("too_long"));
    }
    let game = ReviewOf::new(record, setup.net.clone(), &setup.start);
    Ok(Review::new(Box::new(game), (G::NAME, G::TITLE, G::SIDES)))
}

/// A review of the game named: one arm per game.
fn new_review(app: &App, game: &str, text: &str) -> Result<Review, ApiError> {
    let cfg = &app.config;
    match game {
        Liuzhou::NAME => review_of(&app.setups.liuzhou, text, cfg),
        Xiangqi::NAME => review_of(&app.setups.xiangqi, text, cfg),
        GoState::NAME => review_of(&app.setups.go, text, cfg),
        other => Err(
            ApiError::new(StatusCode::BAD_REQUEST, format!("unknown game {other:?}"))
                .code("unknown_game"),
        ),
    }
}

async fn create_review(
    State(app): State<AppState>,
    body: Result<Json<NewReview>, JsonRejection>,
) -> Result<(StatusCode, Json<ReviewView>), ApiError> {
    let Json(req) = body?;
    let (game, text) = match req {
        NewReview {
            session: Some(id),
            game: None,
            record: None,
        } => {
            let session = app.take(&id)?;
            (session.view().game.to_string(), session.record().text)
        }
        NewReview {
            session: None,
            game: Some(game),
            record: Some(text),
        } => (game, text),
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "give either {game, record} or {session}",
            ))
        }
    };
    // Replaying a long record and drawing its positions is blocking work.
    let maker = app.clone();
    let review = tokio::task::spawn_blocking(move || new_review(&maker, &game, &text))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    let id = Store::new_id();
    let review = Arc::new(review);
    let view = review.view(&id);
    app.reviews.insert(id.clone(), review);
    tracing::info!(review = %id, reviews = app.reviews.count(), game = %view.game, positions = view.positions.len(), "new review");
    Ok((StatusCode::CREATED, Json(view)))
}

impl App {
    fn review(&self, id: &str) -> Result<Arc<Review>, ApiError> {
        self.reviews.get(id).ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no review {id:?} (it expired, was deleted, or never existed)"),
            )
            .code("no_review")
        })
    }
}

async fn show_review(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<ReviewView>, ApiError> {
    Ok(Json(app.review(&id)?.view(&id)))
}

async fn review_progress(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<ProgressView>, ApiError> {
    Ok(Json(app.review(&id)?.progress_view()))
}

async fn delete_review(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<StatusCode, ApiError> {
    app.review(&id)?;
    app.reviews.remove(&id);
    Ok(StatusCode::NO_CONTENT)
}

async fn review_record(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Response, ApiError> {
    record_file(app.review(&id)?.game.record())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalyseRequest {
    /// Visits per position; the config's `analysis_default_visits` when absent.
    strength: Option<u64>,
    /// Seed of the searches' random choices; position `i` searches with `seed + i`.
    seed: Option<u64>,
}

/// Starts (or resumes) the analysis of every position not yet analysed at this strength.
async fn analyse_review(
    State(app): State<AppState>,
    SessionId(id): SessionId,
    body: Result<Json<AnalyseRequest>, JsonRejection>,
) -> Result<Json<ProgressView>, ApiError> {
    let Json(req) = body?;
    let review = app.review(&id)?;
    let visits = req.strength.unwrap_or(app.config.analysis_default_visits);
    if visits == 0 || visits > app.config.analysis_max_visits {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "strength {visits} is outside 1..={} visits for analysis",
                app.config.analysis_max_visits
            ),
        )
        .code("bad_strength"));
    }
    {
        let mut p = review.lock();
        if matches!(p.status, Status::Queued | Status::Running) {
            return Err(
                ApiError::new(StatusCode::CONFLICT, "the analysis is already running")
                    .code("review_running"),
            );
        }
        if p.visits != visits {
            // Values of two strengths do not belong on one graph.
            p.points.iter_mut().for_each(|x| *x = None);
        }
        p.visits = visits;
        p.status = Status::Queued;
        p.error = None;
    }
    review
        .stop
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let run = 1 + review.run.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let seed = req.seed.unwrap_or_else(rand::random);
    tokio::spawn(run_analysis(app.clone(), review.clone(), run, visits, seed));
    Ok(Json(review.progress_view()))
}

/// Ends a running analysis after the position it is on; what it found stays.
async fn stop_review(
    State(app): State<AppState>,
    SessionId(id): SessionId,
) -> Result<Json<ProgressView>, ApiError> {
    let review = app.review(&id)?;
    review.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    {
        let mut p = review.lock();
        // Not yet started: it never will.
        if p.status == Status::Queued {
            p.status = Status::Stopped;
        }
    }
    Ok(Json(review.progress_view()))
}

/// The background analysis of one review: one analysis slot for the whole run, and a thinking
/// slot per position (taken in turn with players' moves, so a review never holds more than one).
async fn run_analysis(app: AppState, review: Arc<Review>, run: u64, visits: u64, seed: u64) {
    use std::sync::atomic::Ordering;
    let set = |status: Status| review.lock().status = status;
    let stopped = || review.stop.load(Ordering::SeqCst);
    let Ok(_slot) = app.analysing.clone().acquire_owned().await else {
        return;
    };
    if review.run.load(Ordering::SeqCst) != run {
        // Stopped while waiting, and started again since: the newer run does the work.
        return;
    }
    if stopped() {
        set(Status::Stopped);
        return;
    }
    set(Status::Running);
    for i in 0..review.game.positions_count() {
        if review.lock().points[i].is_some() {
            continue;
        }
        let Ok(permit) = app.thinking.clone().acquire_owned().await else {
            return;
        };
        if stopped() {
            set(Status::Stopped);
            return;
        }
        let r = review.clone();
        let found = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            r.game.analyse(i, visits, seed.wrapping_add(i as u64))
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|x| x);
        let mut p = review.lock();
        match found {
            Ok(point) => p.points[i] = Some(point),
            Err(e) => {
                tracing::error!(position = i, error = %e, "review analysis failed");
                p.status = Status::Failed;
                p.error = Some(format!("position {i}: {e}"));
                return;
            }
        }
    }
    set(if stopped() {
        Status::Stopped
    } else {
        Status::Done
    });
}
