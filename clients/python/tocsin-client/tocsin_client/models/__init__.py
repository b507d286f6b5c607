"""Contains all the data models used in inputs/outputs"""

from .accepted_out import AcceptedOut
from .actor_out import ActorOut
from .address_in import AddressIn
from .alert import Alert
from .alert_options import AlertOptions
from .alertmanager_webhook_body import AlertmanagerWebhookBody
from .alerts_accepted import AlertsAccepted
from .answers_in import AnswersIn
from .answers_in_answers import AnswersInAnswers
from .assertion_in import AssertionIn
from .assertion_in_credential import AssertionInCredential
from .assertion_options_in import AssertionOptionsIn
from .attributes import Attributes
from .audit_entry_out import AuditEntryOut
from .audit_entry_out_detail import AuditEntryOutDetail
from .authentication_policy import AuthenticationPolicy
from .authenticator_out import AuthenticatorOut
from .batch_accepted import BatchAccepted
from .book_in import BookIn
from .book_out import BookOut
from .challenge_in import ChallengeIn
from .check_in import CheckIn
from .check_out import CheckOut
from .check_subject import CheckSubject
from .check_subject_kind import CheckSubjectKind
from .control_policy_out import ControlPolicyOut
from .control_policy_out_status import ControlPolicyOutStatus
from .control_policy_out_type import ControlPolicyOutType
from .control_policy_profile import ControlPolicyProfile
from .control_policy_profile_status import ControlPolicyProfileStatus
from .control_policy_profile_type import ControlPolicyProfileType
from .control_state_out import ControlStateOut
from .control_state_out_last_values import ControlStateOutLastValues
from .control_state_out_peak import ControlStateOutPeak
from .control_state_out_policy_type import ControlStateOutPolicyType
from .control_state_out_status import ControlStateOutStatus
from .credential_in import CredentialIn
from .credential_in_status import CredentialInStatus
from .credential_out import CredentialOut
from .credential_out_status import CredentialOutStatus
from .credential_patch import CredentialPatch
from .credential_patch_status import CredentialPatchStatus
from .custom_role_out import CustomRoleOut
from .delivery_out import DeliveryOut
from .error_out import ErrorOut
from .error_out_details import ErrorOutDetails
from .event_control import EventControl
from .event_control_action_type_0 import EventControlActionType0
from .event_control_metrics_type_0 import EventControlMetricsType0
from .event_info import EventInfo
from .event_trace_out import EventTraceOut
from .event_trace_out_steps_item import EventTraceOutStepsItem
from .exchange_attempt_out import ExchangeAttemptOut
from .field_value import FieldValue
from .field_value_in import FieldValueIn
from .field_value_in_type import FieldValueInType
from .field_value_type import FieldValueType
from .form_answer_out import FormAnswerOut
from .form_answer_out_answers import FormAnswerOutAnswers
from .get_control_state_status import GetControlStateStatus
from .grant_out import GrantOut
from .group_in import GroupIn
from .group_out import GroupOut
from .group_patch import GroupPatch
from .health_out import HealthOut
from .incident_binding import IncidentBinding
from .incident_binding_out import IncidentBindingOut
from .incident_bindings import IncidentBindings
from .incident_bindings_out import IncidentBindingsOut
from .incident_out import IncidentOut
from .incident_out_mode import IncidentOutMode
from .incident_out_status import IncidentOutStatus
from .incident_patch import IncidentPatch
from .incident_patch_status import IncidentPatchStatus
from .integration_key_created_out import IntegrationKeyCreatedOut
from .integration_key_in import IntegrationKeyIn
from .integration_key_out import IntegrationKeyOut
from .invitation_out import InvitationOut
from .list_incidents_mode_type_0 import ListIncidentsModeType0
from .list_incidents_order import ListIncidentsOrder
from .list_incidents_status_type_0 import ListIncidentsStatusType0
from .list_topic_events_decision_type_0 import ListTopicEventsDecisionType0
from .list_topic_events_order import ListTopicEventsOrder
from .list_topic_events_status_type_0 import ListTopicEventsStatusType0
from .me_out import MeOut
from .methods_out import MethodsOut
from .metric_rule_in import MetricRuleIn
from .metric_rule_in_mode import MetricRuleInMode
from .new_password_in import NewPasswordIn
from .note_in import NoteIn
from .notification_object import NotificationObject
from .notification_object_data_type_0 import NotificationObjectDataType0
from .notification_text import NotificationText
from .o_auth_error_out import OAuthErrorOut
from .one_time_token_in import OneTimeTokenIn
from .options_out import OptionsOut
from .options_out_public_key import OptionsOutPublicKey
from .organization_in import OrganizationIn
from .organization_out import OrganizationOut
from .organization_patch import OrganizationPatch
from .page_audit_entry_out import PageAuditEntryOut
from .page_authenticator_out import PageAuthenticatorOut
from .page_book_out import PageBookOut
from .page_credential_out import PageCredentialOut
from .page_delivery_out import PageDeliveryOut
from .page_exchange_attempt_out import PageExchangeAttemptOut
from .page_form_answer_out import PageFormAnswerOut
from .page_group_out import PageGroupOut
from .page_incident_out import PageIncidentOut
from .page_integration_key_out import PageIntegrationKeyOut
from .page_push_out import PagePushOut
from .page_service_account_out import PageServiceAccountOut
from .page_session_out import PageSessionOut
from .page_shared_topic_out import PageSharedTopicOut
from .page_system_role_out import PageSystemRoleOut
from .page_timeline_entry_out import PageTimelineEntryOut
from .page_token_out import PageTokenOut
from .page_topic_event_out import PageTopicEventOut
from .page_topic_out import PageTopicOut
from .page_union_system_role_out_custom_role_out import (
    PageUnionSystemRoleOutCustomRoleOut,
)
from .page_user_out import PageUserOut
from .page_workflow_out import PageWorkflowOut
from .pagerduty_enqueue_body import PagerdutyEnqueueBody
from .pagerduty_enqueue_body_event_action import PagerdutyEnqueueBodyEventAction
from .pagerduty_enqueue_body_images_item import PagerdutyEnqueueBodyImagesItem
from .pagerduty_enqueue_body_links_item import PagerdutyEnqueueBodyLinksItem
from .pagerduty_enqueue_body_payload import PagerdutyEnqueueBodyPayload
from .pagerduty_enqueue_body_payload_severity import PagerdutyEnqueueBodyPayloadSeverity
from .pagerduty_enqueue_response_202 import PagerdutyEnqueueResponse202
from .pagerduty_enqueue_response_400 import PagerdutyEnqueueResponse400
from .pagerduty_enqueue_response_429 import PagerdutyEnqueueResponse429
from .pagerduty_enqueue_response_503 import PagerdutyEnqueueResponse503
from .password_in import PasswordIn
from .policy import Policy
from .policy_out import PolicyOut
from .publish_accepted import PublishAccepted
from .publish_batch_json_body_item import PublishBatchJsonBodyItem
from .publish_batch_json_body_item_data import PublishBatchJsonBodyItemData
from .publish_batch_json_body_item_tocsinaction import (
    PublishBatchJsonBodyItemTocsinaction,
)
from .publish_batch_json_body_item_tocsinstatus import (
    PublishBatchJsonBodyItemTocsinstatus,
)
from .publish_batch_json_publish_request import PublishBatchJsonPublishRequest
from .publish_batch_json_publish_request_data import PublishBatchJsonPublishRequestData
from .publish_json_body import PublishJsonBody
from .publish_json_body_data import PublishJsonBodyData
from .publish_json_body_tocsinaction import PublishJsonBodyTocsinaction
from .publish_json_body_tocsinstatus import PublishJsonBodyTocsinstatus
from .publish_json_publish_request import PublishJsonPublishRequest
from .publish_json_publish_request_data import PublishJsonPublishRequestData
from .publish_status import PublishStatus
from .push_out import PushOut
from .push_out_apns import PushOutApns
from .push_out_fcm import PushOutFcm
from .ready_out import ReadyOut
from .ready_out_checks import ReadyOutChecks
from .ready_out_status import ReadyOutStatus
from .refreshed_out import RefreshedOut
from .registered_out import RegisteredOut
from .registration_in import RegistrationIn
from .registration_in_credential import RegistrationInCredential
from .registration_options_in import RegistrationOptionsIn
from .replay_out import ReplayOut
from .resource_binding import ResourceBinding
from .resource_binding_out import ResourceBindingOut
from .resource_bindings import ResourceBindings
from .resource_bindings_out import ResourceBindingsOut
from .role_in import RoleIn
from .run_operation_book import RunOperationBook
from .second_factor_in import SecondFactorIn
from .second_factor_in_method import SecondFactorInMethod
from .send_email import SendEmail
from .send_push import SendPush
from .send_webhook import SendWebhook
from .service_account_in import ServiceAccountIn
from .service_account_in_status import ServiceAccountInStatus
from .service_account_out import ServiceAccountOut
from .service_account_out_status import ServiceAccountOutStatus
from .service_account_patch import ServiceAccountPatch
from .service_account_patch_status import ServiceAccountPatchStatus
from .session_created_out import SessionCreatedOut
from .session_out import SessionOut
from .shared_topic_out import SharedTopicOut
from .shared_topic_out_access_scope import SharedTopicOutAccessScope
from .shared_topic_out_status import SharedTopicOutStatus
from .sign_in_out import SignInOut
from .sign_in_out_status import SignInOutStatus
from .sound_object import SoundObject
from .sound_object_critical import SoundObjectCritical
from .system_role_out import SystemRoleOut
from .target_out import TargetOut
from .template_variable import TemplateVariable
from .timeline_entry_out import TimelineEntryOut
from .token_created_out import TokenCreatedOut
from .token_exchange_body import TokenExchangeBody
from .token_exchange_body_grant_type import TokenExchangeBodyGrantType
from .token_exchange_body_subject_token_type import TokenExchangeBodySubjectTokenType
from .token_exchange_out import TokenExchangeOut
from .token_in import TokenIn
from .token_out import TokenOut
from .topic_event_out import TopicEventOut
from .topic_event_out_decision_type_0 import TopicEventOutDecisionType0
from .topic_event_out_status_type_0 import TopicEventOutStatusType0
from .topic_field import TopicField
from .topic_field_in import TopicFieldIn
from .topic_in import TopicIn
from .topic_in_access_scope import TopicInAccessScope
from .topic_in_status import TopicInStatus
from .topic_out import TopicOut
from .topic_out_access_scope import TopicOutAccessScope
from .topic_out_status import TopicOutStatus
from .topic_patch import TopicPatch
from .topic_patch_access_scope import TopicPatchAccessScope
from .topic_patch_status import TopicPatchStatus
from .totp_confirm_in import TotpConfirmIn
from .totp_confirmed_out import TotpConfirmedOut
from .totp_enrolment_out import TotpEnrolmentOut
from .user_in import UserIn
from .user_in_status import UserInStatus
from .user_out import UserOut
from .user_out_status import UserOutStatus
from .user_patch import UserPatch
from .user_patch_status import UserPatchStatus
from .workflow_in import WorkflowIn
from .workflow_in_filter_type_0 import WorkflowInFilterType0
from .workflow_in_mode import WorkflowInMode
from .workflow_in_status import WorkflowInStatus
from .workflow_out import WorkflowOut
from .workflow_out_actions_item import WorkflowOutActionsItem
from .workflow_out_filter_type_0 import WorkflowOutFilterType0
from .workflow_out_mode import WorkflowOutMode
from .workflow_out_status import WorkflowOutStatus
from .workflow_patch import WorkflowPatch
from .workflow_patch_filter_type_0 import WorkflowPatchFilterType0
from .workflow_patch_mode import WorkflowPatchMode
from .workflow_patch_status import WorkflowPatchStatus

__all__ = (
    "AcceptedOut",
    "ActorOut",
    "AddressIn",
    "Alert",
    "AlertOptions",
    "AlertmanagerWebhookBody",
    "AlertsAccepted",
    "AnswersIn",
    "AnswersInAnswers",
    "AssertionIn",
    "AssertionInCredential",
    "AssertionOptionsIn",
    "Attributes",
    "AuditEntryOut",
    "AuditEntryOutDetail",
    "AuthenticationPolicy",
    "AuthenticatorOut",
    "BatchAccepted",
    "BookIn",
    "BookOut",
    "ChallengeIn",
    "CheckIn",
    "CheckOut",
    "CheckSubject",
    "CheckSubjectKind",
    "ControlPolicyOut",
    "ControlPolicyOutStatus",
    "ControlPolicyOutType",
    "ControlPolicyProfile",
    "ControlPolicyProfileStatus",
    "ControlPolicyProfileType",
    "ControlStateOut",
    "ControlStateOutLastValues",
    "ControlStateOutPeak",
    "ControlStateOutPolicyType",
    "ControlStateOutStatus",
    "CredentialIn",
    "CredentialInStatus",
    "CredentialOut",
    "CredentialOutStatus",
    "CredentialPatch",
    "CredentialPatchStatus",
    "CustomRoleOut",
    "DeliveryOut",
    "ErrorOut",
    "ErrorOutDetails",
    "EventControl",
    "EventControlActionType0",
    "EventControlMetricsType0",
    "EventInfo",
    "EventTraceOut",
    "EventTraceOutStepsItem",
    "ExchangeAttemptOut",
    "FieldValue",
    "FieldValueIn",
    "FieldValueInType",
    "FieldValueType",
    "FormAnswerOut",
    "FormAnswerOutAnswers",
    "GetControlStateStatus",
    "GrantOut",
    "GroupIn",
    "GroupOut",
    "GroupPatch",
    "HealthOut",
    "IncidentBinding",
    "IncidentBindingOut",
    "IncidentBindings",
    "IncidentBindingsOut",
    "IncidentOut",
    "IncidentOutMode",
    "IncidentOutStatus",
    "IncidentPatch",
    "IncidentPatchStatus",
    "IntegrationKeyCreatedOut",
    "IntegrationKeyIn",
    "IntegrationKeyOut",
    "InvitationOut",
    "ListIncidentsModeType0",
    "ListIncidentsOrder",
    "ListIncidentsStatusType0",
    "ListTopicEventsDecisionType0",
    "ListTopicEventsOrder",
    "ListTopicEventsStatusType0",
    "MeOut",
    "MethodsOut",
    "MetricRuleIn",
    "MetricRuleInMode",
    "NewPasswordIn",
    "NoteIn",
    "NotificationObject",
    "NotificationObjectDataType0",
    "NotificationText",
    "OAuthErrorOut",
    "OneTimeTokenIn",
    "OptionsOut",
    "OptionsOutPublicKey",
    "OrganizationIn",
    "OrganizationOut",
    "OrganizationPatch",
    "PageAuditEntryOut",
    "PageAuthenticatorOut",
    "PageBookOut",
    "PageCredentialOut",
    "PageDeliveryOut",
    "PageExchangeAttemptOut",
    "PageFormAnswerOut",
    "PageGroupOut",
    "PageIncidentOut",
    "PageIntegrationKeyOut",
    "PagePushOut",
    "PageServiceAccountOut",
    "PageSessionOut",
    "PageSharedTopicOut",
    "PageSystemRoleOut",
    "PageTimelineEntryOut",
    "PageTokenOut",
    "PageTopicEventOut",
    "PageTopicOut",
    "PageUnionSystemRoleOutCustomRoleOut",
    "PageUserOut",
    "PageWorkflowOut",
    "PagerdutyEnqueueBody",
    "PagerdutyEnqueueBodyEventAction",
    "PagerdutyEnqueueBodyImagesItem",
    "PagerdutyEnqueueBodyLinksItem",
    "PagerdutyEnqueueBodyPayload",
    "PagerdutyEnqueueBodyPayloadSeverity",
    "PagerdutyEnqueueResponse202",
    "PagerdutyEnqueueResponse400",
    "PagerdutyEnqueueResponse429",
    "PagerdutyEnqueueResponse503",
    "PasswordIn",
    "Policy",
    "PolicyOut",
    "PublishAccepted",
    "PublishBatchJsonBodyItem",
    "PublishBatchJsonBodyItemData",
    "PublishBatchJsonBodyItemTocsinaction",
    "PublishBatchJsonBodyItemTocsinstatus",
    "PublishBatchJsonPublishRequest",
    "PublishBatchJsonPublishRequestData",
    "PublishJsonBody",
    "PublishJsonBodyData",
    "PublishJsonBodyTocsinaction",
    "PublishJsonBodyTocsinstatus",
    "PublishJsonPublishRequest",
    "PublishJsonPublishRequestData",
    "PublishStatus",
    "PushOut",
    "PushOutApns",
    "PushOutFcm",
    "ReadyOut",
    "ReadyOutChecks",
    "ReadyOutStatus",
    "RefreshedOut",
    "RegisteredOut",
    "RegistrationIn",
    "RegistrationInCredential",
    "RegistrationOptionsIn",
    "ReplayOut",
    "ResourceBinding",
    "ResourceBindingOut",
    "ResourceBindings",
    "ResourceBindingsOut",
    "RoleIn",
    "RunOperationBook",
    "SecondFactorIn",
    "SecondFactorInMethod",
    "SendEmail",
    "SendPush",
    "SendWebhook",
    "ServiceAccountIn",
    "ServiceAccountInStatus",
    "ServiceAccountOut",
    "ServiceAccountOutStatus",
    "ServiceAccountPatch",
    "ServiceAccountPatchStatus",
    "SessionCreatedOut",
    "SessionOut",
    "SharedTopicOut",
    "SharedTopicOutAccessScope",
    "SharedTopicOutStatus",
    "SignInOut",
    "SignInOutStatus",
    "SoundObject",
    "SoundObjectCritical",
    "SystemRoleOut",
    "TargetOut",
    "TemplateVariable",
    "TimelineEntryOut",
    "TokenCreatedOut",
    "TokenExchangeBody",
    "TokenExchangeBodyGrantType",
    "TokenExchangeBodySubjectTokenType",
    "TokenExchangeOut",
    "TokenIn",
    "TokenOut",
    "TopicEventOut",
    "TopicEventOutDecisionType0",
    "TopicEventOutStatusType0",
    "TopicField",
    "TopicFieldIn",
    "TopicIn",
    "TopicInAccessScope",
    "TopicInStatus",
    "TopicOut",
    "TopicOutAccessScope",
    "TopicOutStatus",
    "TopicPatch",
    "TopicPatchAccessScope",
    "TopicPatchStatus",
    "TotpConfirmIn",
    "TotpConfirmedOut",
    "TotpEnrolmentOut",
    "UserIn",
    "UserInStatus",
    "UserOut",
    "UserOutStatus",
    "UserPatch",
    "UserPatchStatus",
    "WorkflowIn",
    "WorkflowInFilterType0",
    "WorkflowInMode",
    "WorkflowInStatus",
    "WorkflowOut",
    "WorkflowOutActionsItem",
    "WorkflowOutFilterType0",
    "WorkflowOutMode",
    "WorkflowOutStatus",
    "WorkflowPatch",
    "WorkflowPatchFilterType0",
    "WorkflowPatchMode",
    "WorkflowPatchStatus",
)
