import { callerIdentity } from '../lib/http/callerIdentity.ts';
import { httpOperation } from '../lib/http/pipeline.ts';
import { statusShape } from '../lib/http/shapes.ts';
import { statusRequest } from '../lib/status/statusRequest.ts';

/** GET /erp/sales_registration/{id} and GET /crm/case/{CrmId} */
export const handler = httpOperation(statusShape).use(callerIdentity()).handler(statusRequest);
