import { checkJsonShape, JSON_SHAPE_LIMITS, type JsonShapeLimits } from '@host/protocol';
import express, { type RequestHandler } from 'express';

/** The `type` of the error the JSON body parser passes on for a body beyond the JSON shape limits. */
export const JSON_TOO_COMPLEX_TYPE = 'entity.json.too_complex';

/**
 * Express's JSON body parser, which also refuses a body nested deeper or
 * wider than the JSON shape limits before it is parsed (the error handler
 * answers REQUEST_JSON_TOO_COMPLEX): every JSON body of the admin API goes
 * through this one, so none reaches a route, a store or a plugin unchecked.
 */
export function jsonBody(o: { limit: string | number; shape?: JsonShapeLimits }): RequestHandler {
  const shape = o.shape ?? JSON_SHAPE_LIMITS;
  return express.json({
    limit: o.limit,
    verify: (_req, _res, buf) => {
      const violation = checkJsonShape(buf, shape);
      if (violation) throw Object.assign(new Error(`The JSON body is refused: ${violation.message}.`), { type: JSON_TOO_COMPLEX_TYPE });
    },
  });
}
