//! A store that releases a test resource (a temporary directory, a scratch database) when the
//! last handle to it is dropped — at the end of a check, or while a failed check unwinds.

use std::sync::Arc;

use docreview_core::model::{
    Account, CommentRecord, CommentThread, LoginCodeRecord, MessageRecord, Millis, ProjectMember,
    ProjectRecord, ProjectRole, ReviewHead, ReviewState, ReviewSummaryRecord, RunRecord,
    SessionRecord, TokenRecord, User, VersionRecord,
};
use docreview_core::store::{
    CommentHit, CommentSearch, CommentsWrite, MemberQuery, NewReview, ProjectImport, ProjectQuery,
    ReviewHit, ReviewQuery, ReviewSearch, ReviewUpdate, Revisions, Store, StoreResult,
    VersionWrite,
};

/// Delegates every `Store` method to `store`; drops `cleanup` after the store itself, so a
/// cleanup that deletes the database runs once nothing uses it any more.
pub struct StoreWithCleanup {
    // Field order matters: fields drop in declaration order.
    store: Arc<dyn Store>,
    _cleanup: Box<dyn Send + Sync>,
}

impl StoreWithCleanup {
    pub fn new(store: Arc<dyn Store>, cleanup: impl Send + Sync + 'static) -> Self {
        StoreWithCleanup {
            store,
            _cleanup: Box::new(cleanup),
        }
    }
}

#[async_trait::async_trait]
impl Store for StoreWithCleanup {
    async fn ping(&self) -> StoreResult<()> {
        self.store.ping().await
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<docreview_core::events::ReviewEvent> {
        self.store.subscribe()
    }
    async fn create_account(
        &self,
        account: Account,
        password_hash: Option<String>,
    ) -> StoreResult<()> {
        self.store.create_account(account, password_hash).await
    }
    async fn ensure_account(&self, account: Account) -> StoreResult<()> {
        self.store.ensure_account(account).await
    }
    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        self.store.account_by_email(email).await
    }
    async fn account_by_id(&self, id: &str) -> StoreResult<Option<Account>> {
        self.store.account_by_id(id).await
    }
    async fn insert_token(&self, token: TokenRecord) -> StoreResult<()> {
        self.store.insert_token(token).await
    }
    async fn token_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<(TokenRecord, Account)>> {
        self.store.token_by_hash(hash).await
    }
    async fn touch_token(&self, token_id: &str, at: Millis) -> StoreResult<()> {
        self.store.touch_token(token_id, at).await
    }
    async fn tokens_of(&self, user_id: &str) -> StoreResult<Vec<TokenRecord>> {
        self.store.tokens_of(user_id).await
    }
    async fn revoke_token(&self, user_id: &str, token_id: &str, at: Millis) -> StoreResult<bool> {
        self.store.revoke_token(user_id, token_id, at).await
    }
    async fn password_hash(&self, user_id: &str) -> StoreResult<Option<String>> {
        self.store.password_hash(user_id).await
    }
    async fn list_accounts(&self, query: MemberQuery) -> StoreResult<Vec<Account>> {
        self.store.list_accounts(query).await
    }
    async fn update_account(&self, account: Account) -> StoreResult<()> {
        self.store.update_account(account).await
    }
    async fn remove_account(&self, user_id: &str, at: Millis) -> StoreResult<()> {
        self.store.remove_account(user_id, at).await
    }
    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()> {
        self.store.insert_session(session).await
    }
    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
    ) -> StoreResult<Option<(SessionRecord, Account)>> {
        self.store.session_by_hash(hash).await
    }
    async fn delete_session(&self, hash: &[u8; 32]) -> StoreResult<()> {
        self.store.delete_session(hash).await
    }
    async fn insert_login_code(&self, code: LoginCodeRecord) -> StoreResult<()> {
        self.store.insert_login_code(code).await
    }
    async fn login_code(&self, hash: &[u8; 32]) -> StoreResult<Option<LoginCodeRecord>> {
        self.store.login_code(hash).await
    }
    async fn redeem_login_code(
        &self,
        hash: &[u8; 32],
        at: Millis,
        token: TokenRecord,
    ) -> StoreResult<bool> {
        self.store.redeem_login_code(hash, at, token).await
    }
    async fn create_review(&self, review: NewReview) -> StoreResult<()> {
        self.store.create_review(review).await
    }
    async fn review_head(&self, review_id: &str) -> StoreResult<Option<ReviewHead>> {
        self.store.review_head(review_id).await
    }
    async fn review_state(&self, review_id: &str) -> StoreResult<Option<ReviewState>> {
        self.store.review_state(review_id).await
    }
    async fn list_reviews(&self, query: ReviewQuery) -> StoreResult<Vec<ReviewSummaryRecord>> {
        self.store.list_reviews(query).await
    }
    async fn versions(&self, review_id: &str) -> StoreResult<Vec<VersionRecord>> {
        self.store.versions(review_id).await
    }
    async fn version(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<VersionRecord>> {
        self.store.version(review_id, version_id).await
    }
    async fn version_html(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<(VersionRecord, Vec<u8>)>> {
        self.store.version_html(review_id, version_id).await
    }
    async fn write_version(&self, write: VersionWrite) -> StoreResult<Revisions> {
        self.store.write_version(write).await
    }
    async fn update_review(&self, update: ReviewUpdate) -> StoreResult<()> {
        self.store.update_review(update).await
    }
    async fn delete_review(&self, review_id: &str) -> StoreResult<()> {
        self.store.delete_review(review_id).await
    }
    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>> {
        self.store.project(code).await
    }
    async fn import_projects(&self, projects: Vec<ProjectRecord>) -> StoreResult<ProjectImport> {
        self.store.import_projects(projects).await
    }
    async fn list_projects(
        &self,
        query: ProjectQuery,
    ) -> StoreResult<Vec<(ProjectRecord, Option<ProjectRole>)>> {
        self.store.list_projects(query).await
    }
    async fn project_role(&self, code: &str, user_id: &str) -> StoreResult<Option<ProjectRole>> {
        self.store.project_role(code, user_id).await
    }
    async fn project_members(&self, code: &str) -> StoreResult<Vec<ProjectMember>> {
        self.store.project_members(code).await
    }
    async fn change_project_roles(
        &self,
        code: &str,
        set: Vec<(String, ProjectRole)>,
        remove: Vec<String>,
    ) -> StoreResult<()> {
        self.store.change_project_roles(code, set, remove).await
    }
    async fn link_project(
        &self,
        review_id: &str,
        expected: Option<&str>,
        project: Option<&str>,
        at: Millis,
    ) -> StoreResult<bool> {
        self.store
            .link_project(review_id, expected, project, at)
            .await
    }
    async fn search_comments(&self, search: CommentSearch) -> StoreResult<Vec<CommentHit>> {
        self.store.search_comments(search).await
    }
    async fn search_reviews(&self, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
        self.store.search_reviews(search).await
    }
    async fn reviews_without_search_text(
        &self,
        limit: usize,
    ) -> StoreResult<Vec<(String, String)>> {
        self.store.reviews_without_search_text(limit).await
    }
    async fn set_search_text(
        &self,
        review_id: &str,
        version_id: &str,
        text: String,
    ) -> StoreResult<()> {
        self.store
            .set_search_text(review_id, version_id, text)
            .await
    }
    async fn comment_thread(
        &self,
        review_id: &str,
        comment_id: &str,
    ) -> StoreResult<Option<CommentThread>> {
        self.store.comment_thread(review_id, comment_id).await
    }
    async fn live_comments(&self, review_id: &str) -> StoreResult<Vec<CommentRecord>> {
        self.store.live_comments(review_id).await
    }
    async fn users(&self, ids: &[String]) -> StoreResult<Vec<User>> {
        self.store.users(ids).await
    }
    async fn write_comments(&self, review_id: &str, write: CommentsWrite) -> StoreResult<i64> {
        self.store.write_comments(review_id, write).await
    }
    async fn insert_run(&self, run: RunRecord) -> StoreResult<()> {
        self.store.insert_run(run).await
    }
    async fn run(&self, review_id: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
        self.store.run(review_id, run_id).await
    }
    async fn run_items(
        &self,
        review_id: &str,
        run_id: &str,
    ) -> StoreResult<(Vec<CommentRecord>, Vec<MessageRecord>)> {
        self.store.run_items(review_id, run_id).await
    }
    async fn running_runs_before(&self, cutoff: Millis) -> StoreResult<Vec<(String, String)>> {
        self.store.running_runs_before(cutoff).await
    }
}
