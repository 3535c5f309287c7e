/**
 * The compliance commands (`svc compliance holds …`, `svc compliance erasure …`), sorted by path: the manifest's `cli`
 * (index.ts), spread in the CLI index (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { ComplianceErasureEventsCommand } from '../../cli/commands/compliance/erasure/events.js';
import { ComplianceErasureExecuteCommand } from '../../cli/commands/compliance/erasure/execute.js';
import { ComplianceErasureGetCommand } from '../../cli/commands/compliance/erasure/get.js';
import { ComplianceErasureLsCommand } from '../../cli/commands/compliance/erasure/ls.js';
import { ComplianceErasureReceiptCommand } from '../../cli/commands/compliance/erasure/receipt.js';
import { ComplianceErasureRegisterCommand } from '../../cli/commands/compliance/erasure/register.js';
import { ComplianceHoldsCheckCommand } from '../../cli/commands/compliance/holds/check.js';
import { ComplianceHoldsEventsCommand } from '../../cli/commands/compliance/holds/events.js';
import { ComplianceHoldsGetCommand } from '../../cli/commands/compliance/holds/get.js';
import { ComplianceHoldsLsCommand } from '../../cli/commands/compliance/holds/ls.js';
import { ComplianceHoldsPlaceCommand } from '../../cli/commands/compliance/holds/place.js';
import { ComplianceHoldsReleaseCommand } from '../../cli/commands/compliance/holds/release.js';

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
