/** The `svc eventing …` commands, sorted by path; listed in ../index.ts with one spread. */
import type { CommandClass } from 'clipanion';
import { EventingDeadLettersLsCommand } from './dead-letters/ls.js';
import { EventingDeadLettersRedeliverCommand } from './dead-letters/redeliver.js';
import {
  EventingEgressActuateCommand,
  EventingFenceArmCommand,
  EventingFenceStatusCommand,
  EventingFenceVerifyCommand,
} from './egress/operator.js';
import { EventingDeliveriesLsCommand } from './deliveries/ls.js';
import { EventingEventsLsCommand } from './events/ls.js';
import { EventingSubscriptionsCreateCommand } from './subscriptions/create.js';
import { EventingSubscriptionsGetCommand } from './subscriptions/get.js';
import { EventingSubscriptionsLsCommand } from './subscriptions/ls.js';
import { EventingSubscriptionsReplayCommand } from './subscriptions/replay.js';
import { EventingSubscriptionsRmCommand } from './subscriptions/rm.js';
import { EventingSubscriptionsRotateSecretCommand } from './subscriptions/rotate-secret.js';
import { EventingSubscriptionsTestCommand } from './subscriptions/test.js';
import { EventingSubscriptionsUpdateCommand } from './subscriptions/update.js';

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
