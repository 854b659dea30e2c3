import type { Application as ApplicationAnswer } from '../../../lib/applications/schemas.ts';
import type {
  Invitation as InvitationAnswer,
  Organization as OrganizationAnswer,
  OrganizationRole as OrganizationRoleAnswer,
  RoleReference,
} from '../../../lib/organizations/schemas.ts';
import type { User as UserAnswer } from '../../../lib/users/schemas.ts';
import { api } from '../api.ts';
import { formatTime } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { Link, navigate } from '../router.tsx';
import { ConfirmButton, DeleteCard, Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type Organization = Pick<OrganizationAnswer, 'id' | 'name' | 'description' | 'createdAt'>;
type User = Pick<UserAnswer, 'id' | 'username' | 'name'>;
/** A user of the organization with the organization roles it holds there. */
type Member = Pick<UserAnswer, 'id' | 'username' | 'name' | 'primaryEmail'> & { organizationRoles: RoleReference[] };
type OrganizationRole = Pick<OrganizationRoleAnswer, 'id' | 'name' | 'type'>;
type Application = Pick<ApplicationAnswer, 'id' | 'name'>;
type Invitation = Pick<InvitationAnswer, 'id' | 'invitee' | 'status' | 'expiresAt' | 'organizationRoles'>;

const week = 7 * 24 * 60 * 60 * 1000;
/** An invitation's status as the catalogue names it (Logto's values; an unknown one reads as pending). */
const invitationStatus = (status: string) =>
  (['Pending', 'Accepted', 'Expired', 'Revoked'] as const).find((known) => known === status) ?? 'Pending';
const who = (user: { id: string; username: string | null; name: string | null }) =>
  user.name ?? user.username ?? user.id;

export function OrganizationsPage() {
  const list = useLoad<Organization[]>('organizations');
  const action = useAction();
  const create = (event: Event) => {
    const { name, description } = formValues(event);
    void action.run(async () => {
      const created = await api<Organization>('POST', 'organizations', { name, description: description || undefined });
      navigate(`/organizations/${created.id}`);
    });
  };
  return (
    <>
      <h1>{t('nav.organizations')}</h1>
      <form class="card inline" onSubmit={create} aria-label={t('organizations.create')}>
        <Field label={t('common.name')} name="name" error={action.error} required />
        <Field label={t('common.description')} name="description" error={action.error} />
        <button class="primary" disabled={action.busy}>
          {t('organizations.createButton')}
        </button>
        <FormError error={action.error} fields={['name', 'description']} />
      </form>
      <Loaded state={list}>
        {(organizations) => (
          <table>
            <thead>
              <tr>
                <th>{t('common.name')}</th>
                <th>{t('common.description')}</th>
                <th>{t('applications.created')}</th>
              </tr>
            </thead>
            <tbody>
              {organizations.map((organization) => (
                <tr key={organization.id}>
                  <td>
                    <Link to={`/organizations/${organization.id}`}>{organization.name}</Link>
                  </td>
                  <td>{organization.description}</td>
                  <td>{formatTime(organization.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  );
}

export function OrganizationPage({ id }: { id: string }) {
  const organization = useLoad<Organization>(`organizations/${id}`);
  const roles = useLoad<OrganizationRole[]>('organization-roles');
  const action = useAction();
  const save = (event: Event) => {
    const { name, description } = formValues(event);
    void action.run(() =>
      api('PATCH', `organizations/${id}`, { name, description: description || null }).then(organization.reload),
    );
  };
  return (
    <Loaded state={organization}>
      {(loaded) => (
        <>
          <p>
            <Link to="/organizations">{t('organizations.back')}</Link>
          </p>
          <h1>{loaded.name}</h1>
          <form class="card" onSubmit={save} aria-label={t('common.settings')}>
            <h2>{t('common.settings')}</h2>
            <Field label={t('common.name')} name="name" defaultValue={loaded.name} error={action.error} required />
            <Field
              label={t('common.description')}
              name="description"
              defaultValue={loaded.description ?? ''}
              error={action.error}
            />
            <FormError error={action.error} fields={['name', 'description']} />
            <button class="primary" disabled={action.busy}>
              {t('common.save')}
            </button>
          </form>
          <Members organizationId={id} roles={(roles.data ?? []).filter((role) => role.type === 'User')} />
          <Applications organizationId={id} />
          <Invitations organizationId={id} roles={(roles.data ?? []).filter((role) => role.type === 'User')} />
          <JitDomains organizationId={id} />
          <DeleteCard
            label={t('organizations.delete')}
            question={t('organizations.confirmDelete', { name: loaded.name })}
            path={`organizations/${id}`}
            back="/organizations"
          />
        </>
      )}
    </Loaded>
  );
}

function Members({ organizationId, roles }: { organizationId: string; roles: OrganizationRole[] }) {
  const members = useLoad<Member[]>(`organizations/${organizationId}/users`);
  const users = useLoad<User[]>('users?page_size=100');
  const action = useAction();
  const add = (event: Event) => {
    const { userId } = formValues(event);
    void action.run(() =>
      api('POST', `organizations/${organizationId}/users`, { userIds: [userId] }).then(members.reload),
    );
  };
  const giveRole = (userId: string, organizationRoleId: string) =>
    void action.run(() =>
      api('POST', `organizations/${organizationId}/users/${userId}/roles`, {
        organizationRoleIds: [organizationRoleId],
      }).then(members.reload),
    );
  return (
    <section class="card" aria-labelledby="members">
      <h2 id="members">{t('organizations.members')}</h2>
      <Loaded state={members}>
        {(items) => (
          <table>
            <thead>
              <tr>
                <th>{t('organizations.member')}</th>
                <th>{t('common.roles')}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((member) => (
                <tr key={member.id}>
                  <td>
                    <Link to={`/users/${member.id}`}>{who(member)}</Link>
                  </td>
                  <td>
                    {member.organizationRoles.map((role) => (
                      <span key={role.id} class="tag">
                        {role.name}{' '}
                        <button
                          type="button"
                          class="link"
                          aria-label={t('organizations.removeRole', { role: role.name, member: who(member) })}
                          onClick={() =>
                            void action.run(() =>
                              api('DELETE', `organizations/${organizationId}/users/${member.id}/roles/${role.id}`).then(
                                members.reload,
                              ),
                            )
                          }
                        >
                          ×
                        </button>
                      </span>
                    ))}
                    <select
                      aria-label={t('organizations.giveRole', { member: who(member) })}
                      onChange={(event) => event.currentTarget.value && giveRole(member.id, event.currentTarget.value)}
                    >
                      <option value="">{t('organizations.addRole')}</option>
                      {roles
                        .filter((role) => !member.organizationRoles.some((held) => held.id === role.id))
                        .map((role) => (
                          <option value={role.id}>{role.name}</option>
                        ))}
                    </select>
                  </td>
                  <td>
                    <ConfirmButton
                      label={t('common.remove')}
                      question={t('organizations.confirmRemove', { name: who(member) })}
                      onConfirm={() =>
                        action.run(() =>
                          api('DELETE', `organizations/${organizationId}/users/${member.id}`).then(members.reload),
                        )
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
      <form class="inline" onSubmit={add} aria-label={t('organizations.addMember')}>
        <Field label={t('common.user')} name="userId">
          {(id) => (
            <select id={id} name="userId" required>
              {(users.data ?? []).map((user) => (
                <option value={user.id}>{who(user)}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>{t('organizations.addMemberButton')}</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}

function Applications({ organizationId }: { organizationId: string }) {
  const members = useLoad<Application[]>(`organizations/${organizationId}/applications`);
  const applications = useLoad<Application[]>('applications?types=MachineToMachine');
  const action = useAction();
  const add = (event: Event) => {
    const { applicationId } = formValues(event);
    void action.run(() =>
      api('POST', `organizations/${organizationId}/applications`, { applicationIds: [applicationId] }).then(
        members.reload,
      ),
    );
  };
  return (
    <section class="card" aria-labelledby="organization-applications">
      <h2 id="organization-applications">{t('nav.applications')}</h2>
      <p>{t('organizations.applicationsHelp')}</p>
      <Loaded state={members}>
        {(items) => (
          <ul>
            {items.map((application) => (
              <li key={application.id}>
                <Link to={`/applications/${application.id}`}>{application.name}</Link>{' '}
                <ConfirmButton
                  label={t('common.remove')}
                  question={t('organizations.confirmRemove', { name: application.name })}
                  onConfirm={() =>
                    action.run(() =>
                      api('DELETE', `organizations/${organizationId}/applications/${application.id}`).then(
                        members.reload,
                      ),
                    )
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline" onSubmit={add} aria-label={t('organizations.addApplication')}>
        <Field label={t('roles.application')} name="applicationId">
          {(id) => (
            <select id={id} name="applicationId" required>
              {(applications.data ?? []).map((application) => (
                <option value={application.id}>{application.name}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>{t('organizations.addApplicationButton')}</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}

function Invitations({ organizationId, roles }: { organizationId: string; roles: OrganizationRole[] }) {
  const invitations = useLoad<Invitation[]>(`organization-invitations?organizationId=${organizationId}`);
  const action = useAction();
  const invite = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const { invitee, organizationRoleId } = formValues(event);
    void action.run(async () => {
      await api('POST', 'organization-invitations', {
        invitee,
        organizationId,
        expiresAt: Date.now() + week,
        organizationRoleIds: organizationRoleId ? [organizationRoleId] : [],
      });
      form.reset();
      invitations.reload();
    });
  };
  return (
    <section class="card" aria-labelledby="invitations">
      <h2 id="invitations">{t('organizations.invitations')}</h2>
      <Loaded state={invitations}>
        {(items) => (
          <table>
            <thead>
              <tr>
                <th>{t('organizations.invitee')}</th>
                <th>{t('users.status')}</th>
                <th>{t('common.roles')}</th>
                <th>{t('applications.expires')}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((invitation) => (
                <tr key={invitation.id}>
                  <td>{invitation.invitee}</td>
                  <td>{t(`organizations.statuses.${invitationStatus(invitation.status)}`)}</td>
                  <td>{invitation.organizationRoles.map((role) => role.name).join(', ')}</td>
                  <td>{formatTime(invitation.expiresAt)}</td>
                  <td>
                    {invitation.status === 'Pending' && (
                      <ConfirmButton
                        label={t('users.revoke')}
                        question={t('organizations.confirmRevoke', { invitee: invitation.invitee })}
                        onConfirm={() =>
                          action.run(() =>
                            api('PUT', `organization-invitations/${invitation.id}/status`, { status: 'Revoked' }).then(
                              invitations.reload,
                            ),
                          )
                        }
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
      <form class="inline" onSubmit={invite} aria-label={t('organizations.invite')}>
        <Field label={t('common.email')} name="invitee" type="email" error={action.error} required />
        <Field label={t('common.role')} name="organizationRoleId">
          {(id) => (
            <select id={id} name="organizationRoleId">
              <option value="">{t('organizations.noRole')}</option>
              {roles.map((role) => (
                <option value={role.id}>{role.name}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>{t('organizations.inviteButton')}</button>
      </form>
      <FormError error={action.error} fields={['invitee']} />
    </section>
  );
}

function JitDomains({ organizationId }: { organizationId: string }) {
  const domains = useLoad<Array<{ emailDomain: string }>>(`organizations/${organizationId}/jit/email-domains`);
  const action = useAction();
  const add = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const { emailDomain } = formValues(event);
    void action.run(async () => {
      await api('POST', `organizations/${organizationId}/jit/email-domains`, { emailDomain });
      form.reset();
      domains.reload();
    });
  };
  return (
    <section class="card" aria-labelledby="jit">
      <h2 id="jit">{t('organizations.jit')}</h2>
      <p>{t('organizations.jitHelp')}</p>
      <Loaded state={domains}>
        {(items) => (
          <ul>
            {items.map(({ emailDomain }) => (
              <li key={emailDomain}>
                {emailDomain}{' '}
                <ConfirmButton
                  label={t('common.remove')}
                  question={t('organizations.confirmRemoveDomain', { domain: emailDomain })}
                  onConfirm={() =>
                    action.run(() =>
                      api(
                        'DELETE',
                        `organizations/${organizationId}/jit/email-domains/${encodeURIComponent(emailDomain)}`,
                      ).then(domains.reload),
                    )
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline" onSubmit={add} aria-label={t('organizations.addDomain')}>
        <Field
          label={t('organizations.emailDomain')}
          name="emailDomain"
          placeholder="example.com"
          error={action.error}
          required
        />
        <button disabled={action.busy}>{t('organizations.addDomainButton')}</button>
      </form>
      <FormError error={action.error} fields={['emailDomain']} />
    </section>
  );
}
