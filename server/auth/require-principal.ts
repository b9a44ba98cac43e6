/**
 * Route guards on the signed-in principal: any contributor, or a coordinator. Unauthenticated is
 * 401 `auth.required`; signed in without coordinator rights is 403 `auth.not_coordinator`.
 * They do not check CSRF: mount `requireCsrf` as well for state-changing routes.
 */
import type { RequestHandler } from 'express';
import { CoordinatorError } from '../../core/errors.ts';

export const requireContributor: RequestHandler = (req, _res, next) => {
  if (!req.principal) return next(new CoordinatorError('auth.required', 'Sign in first'));
  next();
};

export const requireCoordinator: RequestHandler = (req, _res, next) => {
  if (!req.principal) return next(new CoordinatorError('auth.required', 'Sign in as a coordinator first'));
  if (!req.principal.coordinator)
    return next(new CoordinatorError('auth.not_coordinator', 'This action needs a coordinator'));
  next();
};
