/** Wire shapes of users shared by setup, users and members routes. */
import Type from 'typebox';
import { Text, Timestamp, Uuid } from '../../contract/common.js';

// Deliberately loose (RFC 5321 allows far more than any regex should judge); 254 = RFC 5321 §4.5.3.1.3 path limit.
export const Email = Text({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$', description: 'e-mail address (login name)' });
export const Password = Text({ minLength: 1, maxLength: 1024, description: 'at least 12 characters' });
export const RoleName = Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin'), Type.Literal('owner')]);

export const User = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    superadmin: Type.Boolean(),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const Organization = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    region: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

/** An organization name: text (contract/common.ts Text), 1..200 characters. */
export const OrgName = Text({ minLength: 1, maxLength: 200 });
/** A region label, e.g. `eu-central`. */
export const Region = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9-]*$' });
