//! `projects …` and `org …`: projects and their roles, the organization's members and admins.

use clap::Subcommand;
use docreview_client::api::{
    InvitationView, MemberChange, MemberRef, MemberStatus, MemberView, Membership, NewInvitation,
    NewMember, PageQuery, ProjectRole, RoleGrant, RoleRevocation, RolesChange,
};

use super::output::{DIM, paint};
use super::{Failure, Outcome, Output, signed_in_client};

#[derive(Subcommand)]
pub enum ProjectsCommand {
    /// The projects, with your role in each.
    List,
    /// Who holds which role in a project; change it with `--add EMAIL=ROLE`, `--remove EMAIL`.
    Roles {
        /// The project's code (e.g. ACME).
        project: String,
        /// viewer, editor or manager (repeat for more).
        #[arg(long = "add", value_name = "EMAIL=ROLE")]
        add: Vec<String>,
        /// Take someone's role away (repeat for more).
        #[arg(long = "remove", value_name = "EMAIL")]
        remove: Vec<String>,
    },
    /// Link a document to a project.
    Link {
        /// The project's code (e.g. ACME).
        project: String,
        /// The document's id (rv_…).
        review: String,
    },
    /// Unlink a document from its project.
    Unlink {
        /// The project's code (e.g. ACME).
        project: String,
        /// The document's id (rv_…).
        review: String,
    },
}

#[derive(Subcommand)]
pub enum OrgCommand {
    /// The organization's members.
    Members {
        #[command(subcommand)]
        command: Option<MembersCommand>,
    },
    /// The organization's administrators.
    Admins {
        #[command(subcommand)]
        command: Option<AdminsCommand>,
    },
    /// Invite someone: they get a link (mailed when the server has mail) where they choose a
    /// name and a password. The link is printed this once; it works once, for 7 days.
    Invite {
        /// Their email.
        email: String,
        /// A name to suggest (they choose theirs when accepting).
        #[arg(long)]
        name: Option<String>,
        /// An external member: acts only in projects where they hold a role.
        #[arg(long)]
        external: bool,
        /// A project to give them a role in (with --role).
        #[arg(long, requires = "role")]
        project: Option<String>,
        /// Their role there: viewer, editor or manager.
        #[arg(long, requires = "project")]
        role: Option<String>,
    },
    /// The pending invitations (or `revoke ID`).
    Invitations {
        #[command(subcommand)]
        command: Option<InvitationsCommand>,
    },
}

#[derive(Subcommand)]
pub enum InvitationsCommand {
    /// List the pending ones (the default).
    List,
    /// Revoke a pending invitation: its link stops working.
    Revoke {
        /// The invitation's id (inv_…).
        id: String,
    },
}

#[derive(Subcommand)]
pub enum MembersCommand {
    /// List them (the default).
    List,
    /// Register an external member (they act only in projects where they get a role).
    Add {
        /// Their email.
        #[arg(long)]
        email: String,
        /// Their display name.
        #[arg(long)]
        name: String,
    },
    /// Suspend a member: they cannot sign in or use their tokens until reactivated.
    Suspend {
        /// The member's email.
        email: String,
    },
    /// Let a suspended member sign in and use their tokens again.
    Reactivate {
        /// The member's email.
        email: String,
    },
    /// Remove an external member.
    Remove {
        /// The member's email.
        email: String,
    },
}

#[derive(Subcommand)]
pub enum AdminsCommand {
    /// List them (the default).
    List,
    /// Make a member an administrator.
    Add {
        /// The member's email.
        email: String,
    },
    /// Take a member's administrator role away.
    Remove {
        /// The member's email.
        email: String,
    },
}

pub async fn projects(command: ProjectsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        ProjectsCommand::List => {
            let list = client.projects(&PageQuery::default()).await?;
            output.answer(&client, &list, |list| {
                for project in &list.projects {
                    let role = project.role.map_or("-", |role| role.as_str());
                    println!(
                        "{:<12} {:<8} {}{}",
                        project.code,
                        role,
                        project.name.as_deref().unwrap_or(""),
                        if project.in_snapshot {
                            ""
                        } else {
                            " (not in the snapshot)"
                        }
                    );
                }
            })
        }
        ProjectsCommand::Roles {
            project,
            add,
            remove,
        } => {
            let roles = if add.is_empty() && remove.is_empty() {
                client.project_roles(&project).await?
            } else {
                let add = add
                    .iter()
                    .map(|entry| {
                        let (email, role) = entry.split_once('=').ok_or_else(|| {
                            Failure::usage(format!("--add {entry}: write EMAIL=ROLE"))
                        })?;
                        let role = ProjectRole::parse(role).ok_or_else(|| {
                            Failure::usage(format!(
                                "--add {entry}: the role is viewer, editor or manager"
                            ))
                        })?;
                        Ok(RoleGrant {
                            email: email.to_string(),
                            role,
                        })
                    })
                    .collect::<Result<Vec<_>, Failure>>()?;
                let remove = remove
                    .into_iter()
                    .map(|email| RoleRevocation { email })
                    .collect();
                client
                    .change_project_roles(&project, &RolesChange { add, remove })
                    .await?
            };
            output.answer(&client, &roles, |roles| {
                for entry in &roles.roles {
                    println!("{:<32} {}", entry.email, entry.role);
                }
            })
        }
        ProjectsCommand::Link { project, review } => {
            let review = client.link_project(&project, &review).await?;
            output.answer(&client, &review, |review| {
                println!("Linked {} to {project}.", review.title);
            })
        }
        ProjectsCommand::Unlink { project, review } => {
            let review = client.unlink_project(&project, &review).await?;
            output.answer(&client, &review, |review| {
                println!("Unlinked {} from {project}.", review.title);
            })
        }
    }
}

pub async fn org(command: OrgCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        OrgCommand::Members { command } => match command.unwrap_or(MembersCommand::List) {
            MembersCommand::List => {
                let list = client.members(&PageQuery::default()).await?;
                output.answer(&client, &list, |list| print_members(&list.members))
            }
            MembersCommand::Add { email, name } => {
                let new = NewMember {
                    email,
                    display_name: name,
                };
                let member = client.register_member(&new).await?;
                output.answer(&client, &member, |m| {
                    println!("Registered {} <{}>.", m.display_name, m.email);
                })
            }
            MembersCommand::Suspend { email } => {
                set_status(&client, email, MemberStatus::Suspended, output).await
            }
            MembersCommand::Reactivate { email } => {
                set_status(&client, email, MemberStatus::Active, output).await
            }
            MembersCommand::Remove { email } => {
                let member = client.remove_member(&MemberRef { email }).await?;
                output.answer(&client, &member, |m| println!("Removed {}.", m.email))
            }
        },
        OrgCommand::Invite {
            email,
            name,
            external,
            project,
            role,
        } => {
            let project_role = role
                .map(|role| {
                    ProjectRole::parse(&role).ok_or_else(|| {
                        Failure::usage(format!(
                            "--role {role}: the role is viewer, editor or manager"
                        ))
                    })
                })
                .transpose()?;
            let new = NewInvitation {
                email,
                display_name: name,
                membership: if external {
                    Membership::External
                } else {
                    Membership::Internal
                },
                project_code: project,
                project_role,
            };
            let invitation = client.invite(&new).await?;
            output.answer(&client, &invitation, |invitation| {
                println!(
                    "Invited {} ({}); the link works once, until {}:",
                    invitation.email, invitation.membership, invitation.expires_at
                );
                if let Some(url) = &invitation.accept_url {
                    println!("{}", url.expose());
                }
            })
        }
        OrgCommand::Invitations { command } => {
            match command.unwrap_or(InvitationsCommand::List) {
                InvitationsCommand::List => {
                    let list = client.invitations().await?;
                    output.answer(&client, &list, |list| print_invitations(list))
                }
                InvitationsCommand::Revoke { id } => {
                    client.revoke_invitation(&id).await?;
                    // The API answers 204 without a body; `--json` gets what was revoked.
                    output.show(&serde_json::json!({ "id": id, "revoked": true }), |_| {
                        println!("Revoked {id}: its link no longer works.");
                    })
                }
            }
        }
        OrgCommand::Admins { command } => match command.unwrap_or(AdminsCommand::List) {
            AdminsCommand::List => {
                let list = client.admins(&PageQuery::default()).await?;
                output.answer(&client, &list, |list| print_members(&list.admins))
            }
            AdminsCommand::Add { email } => {
                let admin = client.add_admin(&MemberRef { email }).await?;
                output.answer(&client, &admin, |m| println!("{} is an admin.", m.email))
            }
            AdminsCommand::Remove { email } => {
                let admin = client.remove_admin(&MemberRef { email }).await?;
                output.answer(&client, &admin, |m| {
                    println!("{} is no longer an admin.", m.email);
                })
            }
        },
    }
}

async fn set_status(
    client: &docreview_client::Client,
    email: String,
    status: MemberStatus,
    output: &Output,
) -> Outcome {
    let change = MemberChange {
        email,
        status: Some(status),
        display_name: None,
    };
    let member = client.update_member(&change).await?;
    output.answer(client, &member, |m| {
        println!("{} is {}.", m.email, m.status);
    })
}

fn print_invitations(invitations: &[InvitationView]) {
    for invitation in invitations {
        let project = match (&invitation.project_code, invitation.project_role) {
            (Some(code), Some(role)) => format!(" {role} on {code}"),
            _ => String::new(),
        };
        anstream::println!(
            "{}  {:<32} {}{} (until {})",
            paint(DIM, &invitation.id),
            invitation.email,
            invitation.membership,
            project,
            invitation.expires_at
        );
    }
}

fn print_members(members: &[MemberView]) {
    for member in members {
        anstream::println!(
            "{}  {:<32} {:<24} {} {}{}",
            paint(DIM, &member.id),
            member.email,
            member.display_name,
            member.membership,
            member.status,
            if member.is_admin { " admin" } else { "" }
        );
    }
}
