/** TEMPLATE: the wire shapes of the module's routes (TypeBox), declared once and served in /openapi.beta.json. */
import Type from 'typebox';
import { Text, Timestamp, Uuid } from '../../contract/common.js';

export const Item = Type.Object({ id: Uuid, name: Type.String(), created_at: Timestamp }, { additionalProperties: false });
export const ItemBody = Type.Object({ name: Text({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const ItemList = Type.Object({ items: Type.Array(Item) }, { additionalProperties: false });
