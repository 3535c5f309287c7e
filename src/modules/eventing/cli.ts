/**
 * The `svc eventing …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { EventingDeadLettersLsCommand } from '../../cli/commands/eventing/dead-letters/ls.js';
import { EventingDeadLettersRedeliverCommand } from '../../cli/commands/eventing/dead-letters/redeliver.js';
import {
  EventingEgressActuateCommand,
  EventingFenceArmCommand,
  EventingFenceStatusCommand,
  EventingFenceVerifyCommand,
} from '../../cli/commands/eventing/egress/operator.js';
import { EventingDeliveriesLsCommand } from '../../cli/commands/eventing/deliveries/ls.js';
import { EventingEventsLsCommand } from '../../cli/commands/eventing/events/ls.js';
import { EventingSubscriptionsCreateCommand } from '../../cli/commands/eventing/subscriptions/create.js';
import { EventingSubscriptionsGetCommand } from '../../cli/commands/eventing/subscriptions/get.js';
import { EventingSubscriptionsLsCommand } from '../../cli/commands/eventing/subscriptions/ls.js';
import { EventingSubscriptionsReplayCommand } from '../../cli/commands/eventing/subscriptions/replay.js';
import { EventingSubscriptionsRmCommand } from '../../cli/commands/eventing/subscriptions/rm.js';
import { EventingSubscriptionsRotateSecretCommand } from '../../cli/commands/eventing/subscriptions/rotate-secret.js';
import { EventingSubscriptionsTestCommand } from '../../cli/commands/eventing/subscriptions/test.js';
import { EventingSubscriptionsUpdateCommand } from '../../cli/commands/eventing/subscriptions/update.js';

export const eventingCommands: CommandClass[] = [
  EventingDeadLettersLsCommand,
  EventingDeadLettersRedeliverCommand,
  EventingDeliveriesLsCommand,
  EventingEgressActuateCommand,
  EventingEventsLsCommand,
  EventingFenceArmCommand,
  EventingFenceStatusCommand,
  EventingFenceVerifyCommand,
  EventingSubscriptionsCreateCommand,
  EventingSubscriptionsGetCommand,
  EventingSubscriptionsLsCommand,
  EventingSubscriptionsReplayCommand,
  EventingSubscriptionsRmCommand,
  EventingSubscriptionsRotateSecretCommand,
  EventingSubscriptionsTestCommand,
  EventingSubscriptionsUpdateCommand,
];
