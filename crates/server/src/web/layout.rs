//! What every page's frame needs: its title, who is signed in (for the navigation and sign
//! out), the session's CSRF token (for forms and htmx), and the URLs of the app's assets.

use crate::web::assets;
use crate::web::extract::SignedIn;

/// Which entry of the main navigation a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    None,
    Documents,
    Inbox,
    Account,
    Organization,
}

/// The signed-in person, as the navigation shows them.
pub struct NavUser {
    pub name: String,
    pub email: String,
    pub is_admin: bool,
}

pub struct Layout {
    pub title: String,
    pub nav: Nav,
    pub user: Option<NavUser>,
    /// The session's CSRF token; empty without a session.
    pub csrf: String,
    /// Extra class names for `<body>` (a screen's own layout, e.g. `review-screen`).
    pub body_class: &'static str,
}

impl Layout {
    /// A page for someone who is not signed in (sign-in, errors).
    pub fn anonymous(title: &str, nav: Nav) -> Self {
        Layout {
            title: title.to_string(),
            nav,
            user: None,
            csrf: String::new(),
            body_class: "",
        }
    }

    /// A page for the signed-in person.
    pub fn for_user(title: &str, nav: Nav, signed_in: &SignedIn) -> Self {
        let account = &signed_in.actor.account;
        Layout {
            title: title.to_string(),
            nav,
            user: Some(NavUser {
                name: account.user.display_name.clone(),
                email: account.email.clone(),
                is_admin: account.is_admin,
            }),
            csrf: signed_in.csrf.clone(),
            body_class: "",
        }
    }

    pub fn with_body_class(mut self, class: &'static str) -> Self {
        self.body_class = class;
        self
    }

    /// The URL of an embedded asset (`css/app.css` → `/assets/<hash>/css/app.css`).
    #[allow(
        clippy::unused_self,
        reason = "called by the askama templates as a method of the layout"
    )]
    pub fn asset(&self, path: &str) -> String {
        assets::url(path)
    }

    /// `aria-current="page"` for the active navigation entry.
    pub fn current(&self, nav: Nav) -> &'static str {
        if self.nav == nav { "page" } else { "false" }
    }
}
