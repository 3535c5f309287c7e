/** The compliance commands (`svc compliance holds …`, `svc compliance erasure …`), sorted by path; one spread in ../index.ts. */
import type { CommandClass } from 'clipanion';
import { ComplianceErasureEventsCommand } from './erasure/events.js';
import { ComplianceErasureExecuteCommand } from './erasure/execute.js';
import { ComplianceErasureGetCommand } from './erasure/get.js';
import { ComplianceErasureLsCommand } from './erasure/ls.js';
import { ComplianceErasureReceiptCommand } from './erasure/receipt.js';
import { ComplianceErasureRegisterCommand } from './erasure/register.js';
import { ComplianceHoldsCheckCommand } from './holds/check.js';
import { ComplianceHoldsEventsCommand } from './holds/events.js';
import { ComplianceHoldsGetCommand } from './holds/get.js';
import { ComplianceHoldsLsCommand } from './holds/ls.js';
import { ComplianceHoldsPlaceCommand } from './holds/place.js';
import { ComplianceHoldsReleaseCommand } from './holds/release.js';

export const complianceCommands: CommandClass[] = [
  ComplianceErasureEventsCommand,
  ComplianceErasureExecuteCommand,
  ComplianceErasureGetCommand,
  ComplianceErasureLsCommand,
  ComplianceErasureReceiptCommand,
  ComplianceErasureRegisterCommand,
  ComplianceHoldsCheckCommand,
  ComplianceHoldsEventsCommand,
  ComplianceHoldsGetCommand,
  ComplianceHoldsLsCommand,
  ComplianceHoldsPlaceCommand,
  ComplianceHoldsReleaseCommand,
];
